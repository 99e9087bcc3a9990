package dev.runbus.server.http;

/**
 * A request the API refuses, with the HTTP status, the field it is about (or null) and, for 429 and 503, the
 * seconds after which to try again (or 0).
 */
public final class ApiError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;
    final String field;
    final long retryAfterSeconds;

    ApiError(int status, String message, String field) {
        this(status, message, field, 0);
    }

    ApiError(int status, String message, String field, long retryAfterSeconds) {
        super(message, null, false, false);
        this.status = status;
        this.field = field;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static ApiError badRequest(String message, String field) {
        return new ApiError(400, message, field);
    }

    public static ApiError notFound(String message) {
        return new ApiError(404, message, null);
    }
}
