package io.rulesync.api.errors;

import io.rulesync.api.ProblemResponses;
import io.rulesync.model.cluster.KubernetesNames;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * The servlet container's error page ({@code /error}), in place of Spring Boot's: what fails outside
 * a controller (in a filter, or a {@code sendError} of the container) answers as a problem too. The
 * path itself is no route: asked for directly, it is a 404 like any unknown path.
 *
 * <p>Only for what never reaches Spring MVC's dispatch, and so cannot reach {@code ProblemResponses}
 * (the one handler of everything a controller or its parameters refuse).
 */
public final class ProblemErrorController implements ErrorController {
    @RequestMapping("${server.error.path:/error}")
    public ResponseEntity<ProblemDetail> error(HttpServletRequest request) {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        if (!(code instanceof Integer status)) {
            return ResponseEntity.status(HttpStatus.NOT_FOUND)
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .body(ProblemResponses.noRoute(request.getMethod(), request.getRequestURI()));
        }
        HttpStatus known = HttpStatus.resolve(status);
        HttpStatus shown = known == null || status < 400 ? HttpStatus.INTERNAL_SERVER_ERROR : known;
        Object message = request.getAttribute(RequestDispatcher.ERROR_MESSAGE);
        // A server error's cause is for the log (the container logged it); a client error's message says what was
        // wrong.
        String detail = shown.is5xxServerError() || !(message instanceof String m) || m.isBlank()
                ? shown.is5xxServerError() ? "internal error (the api's log has the cause)" : shown.getReasonPhrase()
                : KubernetesNames.printable(m);
        return ResponseEntity.status(shown)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(ProblemDetail.forStatusAndDetail(shown, detail));
    }
}
