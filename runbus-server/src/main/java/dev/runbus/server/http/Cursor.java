package dev.runbus.server.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The opaque {@code cursor} of a paginated listing: where the previous page ended, as the listing's own position
 * (a dead letter's id, a topic name) under the listing's name, in base64url. Opaque so that clients pass it back
 * as it is and the position can change form later; named so that a cursor of one listing given to another is the
 * client's mistake (400) rather than a position read the wrong way.
 *
 * <p>Not signed: a cursor made by hand is read like one handed out, and each listing checks the position in it as it
 * checks its other parameters (a run's time and id, a stream id, a topic name), so nothing a cursor holds reaches
 * Redis or PostgreSQL unchecked. All it chooses is where a page starts, as {@code created_before} of the runs and
 * {@code after} of the dead letters do too, and the page shows nothing the caller's scope does not. Signing with a
 * key of each process would turn a page 2 into a 400 after a restart or on another {@code serve} behind the same
 * address, for no protection gained.
 */
final class Cursor {

    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
    /** Longer than any position a listing hands out (ids of at most 48 characters, topics of at most 200). */
    private static final int MAX_LENGTH = 400;

    private Cursor() {
    }

    /** The cursor that continues listing {@code listing} after {@code position}. */
    static String of(String listing, String position) {
        return ENCODER.encodeToString((listing + ":" + position).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The position in {@code cursor}, a cursor {@link #of} made for {@code listing}; null when {@code cursor} is.
     *
     * @throws ApiError 400 naming the field {@code cursor} otherwise
     */
    static String position(String cursor, String listing) {
        if (cursor == null) {
            return null;
        }
        String text;
        try {
            if (cursor.length() > MAX_LENGTH) {
                throw new IllegalArgumentException("too long");
            }
            text = new String(DECODER.decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw bad();
        }
        if (!text.startsWith(listing + ":") || text.length() == listing.length() + 1) {
            throw bad();
        }
        return text.substring(listing.length() + 1);
    }

    private static ApiError bad() {
        return ApiError.badRequest("cursor must be a next_cursor as this listing returned it", "cursor");
    }
}
