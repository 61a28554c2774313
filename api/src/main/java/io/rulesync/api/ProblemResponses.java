package io.rulesync.api;

import io.rulesync.store.StoreException;
import io.rulesync.model.cluster.KubernetesNames;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Every error is an RFC 9457 problem: Spring MVC's own (no such route, wrong method, ...) through
 * the base class, and anything unexpected as a 500 or 503 whose detail says where to look. The
 * cause goes to the log, never to the client. What fails before a controller is reached is a
 * problem too: {@code errors.ProblemErrorController} (the servlet container's error dispatches) and
 * {@code errors.ProblemReportValve} (Tomcat's own refusals, before any routing).
 */
@RestControllerAdvice
public class ProblemResponses extends ResponseEntityExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ProblemResponses.class);

    @ExceptionHandler(StoreException.class)
    public ResponseEntity<ProblemDetail> storeFailed(StoreException e) {
        log.warn("reading PostgreSQL failed: {}{}", e.getMessage(), e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")");
        return problem(HttpStatus.SERVICE_UNAVAILABLE, "reading the version store failed; retry later (the api's log has the cause)");
    }

    /** Tomcat could not decode the query (a value that is not UTF-8); normally {@code DeclaredParameters} refuses it first. */
    @ExceptionHandler(InvalidParameterException.class)
    public ResponseEntity<ProblemDetail> undecodableQuery(InvalidParameterException e) {
        return about(HttpStatus.BAD_REQUEST, "query", "query: is not valid percent-encoded UTF-8");
    }

    @Override
    protected ResponseEntity<Object> handleNoResourceFoundException(NoResourceFoundException e, HttpHeaders headers, HttpStatusCode status,
            WebRequest request) {
        return handleExceptionInternal(e, noRoute(e.getHttpMethod().name(), "/" + e.getResourcePath()), headers, HttpStatus.NOT_FOUND,
                request);
    }

    @Override
    protected ResponseEntity<Object> handleNoHandlerFoundException(NoHandlerFoundException e, HttpHeaders headers, HttpStatusCode status,
            WebRequest request) {
        return handleExceptionInternal(e, noRoute(e.getHttpMethod(), e.getRequestURL()), headers, HttpStatus.NOT_FOUND, request);
    }

    @ExceptionHandler(Exception.class)
    public ResponseEntity<ProblemDetail> unexpected(Exception e) {
        log.error("request failed", e);
        return problem(HttpStatus.INTERNAL_SERVER_ERROR, "internal error (the api's log has the cause)");
    }

    /** A problem about one request parameter ({@code parameter} names it, {@code detail} says what is wrong). */
    public static ResponseEntity<ProblemDetail> about(HttpStatus status, String parameter, String detail) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON).body(detail(status, parameter, detail));
    }

    /** The body of {@link #about}. */
    public static ProblemDetail detail(HttpStatus status, String parameter, String detail) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(status, detail);
        p.setProperty("parameter", parameter);
        return p;
    }

    /** 404 for a path no route matches (whatever the method: a wrong method on a route is 405). */
    public static ProblemDetail noRoute(String method, String path) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, "path: " + method + " " + KubernetesNames.printable(path)
                + " is not a route of this api (GET /v3/api-docs lists them)");
    }

    /** 404 for a cluster with no versions: the one answer every endpoint under /clusters/{cluster} gives. */
    public static ResponseEntity<ProblemDetail> unknownCluster(String cluster) {
        return about(HttpStatus.NOT_FOUND, "cluster", "cluster: '" + KubernetesNames.printable(cluster) + "' is not known (it has no versions)");
    }

    private static ResponseEntity<ProblemDetail> problem(HttpStatus status, String detail) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(ProblemDetail.forStatusAndDetail(status, detail));
    }
}
