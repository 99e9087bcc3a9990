package dev.runbus.server.http;

/** A request the API refuses, with the HTTP status and the field it is about (or null). */
final class ApiError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;
    final String field;

    ApiError(int status, String message, String field) {
        super(message);
        this.status = status;
        this.field = field;
    }

    static ApiError badRequest(String message, String field) {
        return new ApiError(400, message, field);
    }

    static ApiError notFound(String message) {
        return new ApiError(404, message, null);
    }
}
