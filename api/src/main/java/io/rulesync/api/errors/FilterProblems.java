package io.rulesync.api.errors;

import io.rulesync.model.event.Json;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpStatus;

/**
 * A problem detail (RFC 9457) written by a servlet filter, which answers before Spring's error handling is reached: the
 * same body the controllers' problems have.
 */
public final class FilterProblems {
    private FilterProblems() {}

    public static void write(HttpServletResponse response, HttpStatus status, String detail) throws IOException {
        response.setStatus(status.value());
        response.setContentType("application/problem+json");
        response.setCharacterEncoding("UTF-8");
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title", status.getReasonPhrase());
        problem.put("status", status.value());
        problem.put("detail", detail);
        response.getWriter().write(Json.write(problem));
    }
}
