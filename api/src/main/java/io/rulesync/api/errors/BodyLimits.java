package io.rulesync.api.errors;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.http.HttpStatus;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Every request body is bounded before a byte of it is read: its {@code Content-Length} must be declared and within the
 * limit of its route, else the answer is 413 (too big) or 411 (no length: a chunked body could be endless), and the
 * connection is closed so that the rest is never read. Nothing the api takes is near these limits: an ack is a few
 * hundred bytes (its error at most 4 KiB), a rollback a reason of a few words. A plan's manifests may be a whole cluster's
 * export; they are read object by object, so its limit bounds the time spent, not memory.
 */
public final class BodyLimits extends OncePerRequestFilter {
    /** An agent's request carries at most {@code AcksController.MAX_ACKS} acks. */
    public static final long ACKS = 1024 * 1024;
    /** A plan's manifests: a 10,000-Service cluster's export is about 9 MB of YAML. */
    public static final long PLAN = 256L << 20;
    /** Every other body: an action's reason, a rollout's policy. */
    public static final long OTHER = 64 * 1024;

    public static final String REFUSED = "rulesync.api.bodies.refused";

    private final MeterRegistry meters;

    public BodyLimits(MeterRegistry meters) {
        this.meters = meters;
    }

    /** The most bytes a body of this request may hold. */
    static long limit(String path) {
        return path.endsWith("/acks") ? ACKS : path.endsWith("/plan") ? PLAN : OTHER;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long length = request.getContentLengthLong();
        boolean chunked = request.getHeader("Transfer-Encoding") != null;
        if (length <= 0 && !chunked) {
            chain.doFilter(request, response);
            return;
        }
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        long limit = limit(path);
        if (chunked) {
            refuse(
                    response,
                    HttpStatus.LENGTH_REQUIRED,
                    "a request body needs a Content-Length (at most " + limit + " bytes here); "
                            + "chunked bodies are not taken",
                    "no length");
        } else if (length > limit) {
            refuse(
                    response,
                    HttpStatus.PAYLOAD_TOO_LARGE,
                    "the body is " + length + " bytes; " + request.getMethod() + " " + "requests here take at most "
                            + limit,
                    "too large");
        } else {
            chain.doFilter(request, response);
        }
    }

    private void refuse(HttpServletResponse response, HttpStatus status, String detail, String reason)
            throws IOException {
        Counter.builder(REFUSED)
                .description("request bodies refused before they were read whole, by reason")
                .tag("reason", reason)
                .register(meters)
                .increment();
        // The unread body is not drained: the connection ends with the answer.
        response.setHeader("Connection", "close");
        FilterProblems.write(response, status, detail);
    }
}
