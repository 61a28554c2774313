package io.rulesync.api;

import io.rulesync.api.errors.DeclaredParameters;
import io.rulesync.api.errors.ParameterProblem;
import io.rulesync.api.params.BadValue;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.store.StoreException;
import io.rulesync.store.VersionHistory;
import java.util.Comparator;
import java.util.List;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.context.MessageSourceResolvable;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.validation.FieldError;
import org.springframework.validation.method.ParameterErrors;
import org.springframework.validation.method.ParameterValidationResult;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import org.springframework.web.servlet.resource.NoResourceFoundException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

/**
 * Every error is an RFC 9457 problem: Spring MVC's own (no such route, wrong method, ...) through
 * the base class, and anything unexpected as a 500 or 503 whose detail says where to look. The
 * cause goes to the log, never to the client.
 *
 * <p>Bad input is answered here and only here, naming the parameter or body field at fault: a value
 * its type refuses ({@link BadValue}, from {@code ParameterTypes}' conversions), a Bean Validation
 * constraint it breaks, a required one missing, a body field no request has; and what the
 * controllers throw when the cluster, version or node named does not exist or the cluster refuses
 * the action ({@link ParameterProblem}).
 *
 * <p>What fails before a controller is reached cannot get here, and is a problem too:
 * {@code errors.ProblemErrorController} (the servlet container's error dispatches) and {@code errors.ProblemReportValve} (Tomcat's own refusals, before any routing).
 */
@RestControllerAdvice
public class ProblemResponses extends ResponseEntityExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ProblemResponses.class);

    @ExceptionHandler(StoreException.class)
    public ResponseEntity<ProblemDetail> storeFailed(StoreException e) {
        log.warn(
                "reading PostgreSQL failed: {}{}",
                e.getMessage(),
                e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")");
        return problem(
                HttpStatus.SERVICE_UNAVAILABLE,
                "reading the version store failed; retry later (the api's log has the cause)");
    }

    /**
     * Tomcat could not decode the query (a value that is not UTF-8). {@code DeclaredParameters} names the parameter when it
     * runs first; a mapping that reads a parameter to choose its handler ({@code params = "watch=true"}) makes Tomcat decode
     * the query before it, so the parameter is named here the same way.
     */
    @ExceptionHandler(InvalidParameterException.class)
    public ResponseEntity<ProblemDetail> undecodableQuery(
            InvalidParameterException e, jakarta.servlet.http.HttpServletRequest request) {
        try {
            if (request.getQueryString() != null) {
                DeclaredParameters.decodedNames(request.getQueryString());
            }
        } catch (ParameterProblem p) {
            return ResponseEntity.status(p.getStatusCode())
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .body(p.getBody());
        }
        return about(HttpStatus.BAD_REQUEST, "query", "query: is not valid percent-encoded UTF-8");
    }

    @Override
    protected ResponseEntity<Object> handleNoResourceFoundException(
            NoResourceFoundException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        return handleExceptionInternal(
                e,
                noRoute(e.getHttpMethod().name(), "/" + e.getResourcePath()),
                headers,
                HttpStatus.NOT_FOUND,
                request);
    }

    @Override
    protected ResponseEntity<Object> handleNoHandlerFoundException(
            NoHandlerFoundException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        return handleExceptionInternal(
                e, noRoute(e.getHttpMethod(), e.getRequestURL()), headers, HttpStatus.NOT_FOUND, request);
    }

    /** A value its parameter's type refuses: the converter said why, the parameter's name goes first. */
    @Override
    protected ResponseEntity<Object> handleTypeMismatch(
            TypeMismatchException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        String name = e instanceof MethodArgumentTypeMismatchException m ? m.getName() : e.getPropertyName();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BadValue bad) {
                return handleExceptionInternal(
                        e,
                        detail(HttpStatus.BAD_REQUEST, name, name + ": " + bad.getMessage()),
                        headers,
                        HttpStatus.BAD_REQUEST,
                        request);
            }
        }
        return handleExceptionInternal(
                e,
                detail(
                        HttpStatus.BAD_REQUEST,
                        name,
                        name + ": '" + KubernetesNames.printable(String.valueOf(e.getValue()))
                                + "' is not a valid value"),
                headers,
                HttpStatus.BAD_REQUEST,
                request);
    }

    @Override
    protected ResponseEntity<Object> handleMissingServletRequestParameter(
            MissingServletRequestParameterException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        String name = e.getParameterName();
        return handleExceptionInternal(
                e,
                detail(HttpStatus.BAD_REQUEST, name, name + ": the query parameter ?" + name + "=NAME is required"),
                headers,
                HttpStatus.BAD_REQUEST,
                request);
    }

    /** A parameter or body field that breaks a constraint; of several, the first by name, so the answer does not vary. */
    @Override
    protected ResponseEntity<Object> handleHandlerMethodValidationException(
            HandlerMethodValidationException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        ParameterValidationResult first = e.getParameterValidationResults().get(0);
        if (first instanceof ParameterErrors errors && errors.hasFieldErrors()) {
            return invalid(e, errors.getFieldErrors(), headers, request);
        }
        String name = nameOf(first.getMethodParameter());
        MessageSourceResolvable error = first.getResolvableErrors().get(0);
        return handleExceptionInternal(
                e,
                detail(HttpStatus.BAD_REQUEST, name, refusal(name, error.getDefaultMessage(), first.getArgument())),
                headers,
                HttpStatus.BAD_REQUEST,
                request);
    }

    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(
            MethodArgumentNotValidException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        return invalid(e, e.getFieldErrors(), headers, request);
    }

    private ResponseEntity<Object> invalid(
            Exception e, List<FieldError> errors, HttpHeaders headers, WebRequest request) {
        FieldError first =
                errors.stream().min(Comparator.comparing(FieldError::getField)).orElseThrow();
        return handleExceptionInternal(
                e,
                detail(
                        HttpStatus.BAD_REQUEST,
                        first.getField(),
                        refusal(first.getField(), first.getDefaultMessage(), first.getRejectedValue())),
                headers,
                HttpStatus.BAD_REQUEST,
                request);
    }

    /** "name: message", the refused value quoted where the constraint's message has {@code %s}. */
    private static String refusal(String name, String message, Object value) {
        String m = message == null ? "is not valid" : message;
        return name + ": " + (m.contains("%s") ? m.replace("%s", KubernetesNames.printable(String.valueOf(value))) : m);
    }

    /** The name the request gives the parameter (its {@code @RequestParam} or {@code @PathVariable}), else the Java one. */
    private static String nameOf(MethodParameter p) {
        RequestParam rp = p.getParameterAnnotation(RequestParam.class);
        if (rp != null && !rp.name().isEmpty()) {
            return rp.name();
        }
        PathVariable pv = p.getParameterAnnotation(PathVariable.class);
        if (pv != null && !pv.name().isEmpty()) {
            return pv.name();
        }
        return p.getParameterName();
    }

    /** A body Jackson could not read: a field no request has is named; other malformed JSON is the base class's 400. */
    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(
            HttpMessageNotReadableException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof UnrecognizedPropertyException u) {
                String name = KubernetesNames.printable(u.getPropertyName());
                List<String> known = u.getKnownPropertyIds().stream()
                        .map(String::valueOf)
                        .sorted()
                        .toList();
                return handleExceptionInternal(
                        e,
                        detail(
                                HttpStatus.BAD_REQUEST,
                                name,
                                name + ": is not a field of this request (expected " + String.join(", ", known) + ")"),
                        headers,
                        HttpStatus.BAD_REQUEST,
                        request);
            }
        }
        return super.handleHttpMessageNotReadable(e, headers, status, request);
    }

    @ExceptionHandler(Exception.class)
    public ResponseEntity<ProblemDetail> unexpected(Exception e) {
        log.error("request failed", e);
        return problem(HttpStatus.INTERNAL_SERVER_ERROR, "internal error (the api's log has the cause)");
    }

    /** A problem about one request parameter ({@code parameter} names it, {@code detail} says what is wrong). */
    public static ResponseEntity<ProblemDetail> about(HttpStatus status, String parameter, String detail) {
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(detail(status, parameter, detail));
    }

    /** The body of {@link #about}. */
    public static ProblemDetail detail(HttpStatus status, String parameter, String detail) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(status, detail);
        p.setProperty("parameter", parameter);
        return p;
    }

    /** 404 for a path no route matches (whatever the method: a wrong method on a route is 405). */
    public static ProblemDetail noRoute(String method, String path) {
        return ProblemDetail.forStatusAndDetail(
                HttpStatus.NOT_FOUND,
                "path: " + method + " " + KubernetesNames.printable(path)
                        + " is not a route of this api (GET /v3/api-docs lists them)");
    }

    /** 404 for a cluster with no versions: the one answer every endpoint under /clusters/{cluster} gives. */
    public static ParameterProblem unknownCluster(String cluster) {
        return new ParameterProblem(
                HttpStatus.NOT_FOUND,
                "cluster",
                "cluster: '" + KubernetesNames.printable(cluster) + "' is not known (it has no versions)");
    }

    /** The cluster's newest version, or {@link #unknownCluster} when it has none. */
    public static long knownHead(VersionHistory versions, String cluster) {
        long head = versions.head(cluster);
        if (head == 0) {
            throw unknownCluster(cluster);
        }
        return head;
    }

    /**
     * Why a cluster has no version {@code seq}: 410 when retention removed it (saying which versions remain), 404 when it
     * never existed. {@code parameter} names the request parameter that named it.
     */
    public static ParameterProblem noSuchVersion(String cluster, long seq, long oldest, long head, String parameter) {
        String c = KubernetesNames.printable(cluster);
        if (seq >= 1 && seq < oldest) {
            return new ParameterProblem(
                            HttpStatus.GONE,
                            parameter,
                            parameter + ": cluster '" + c + "' no longer has version " + seq
                                    + ": retention removed versions 1-" + (oldest - 1) + "; versions " + oldest + "-"
                                    + head + " remain")
                    .with("oldest", oldest)
                    .with("latest", head);
        }
        return new ParameterProblem(
                HttpStatus.NOT_FOUND,
                parameter,
                parameter + ": cluster '" + c + "' has no version " + seq + " (its versions are " + oldest + "-" + head
                        + ")");
    }

    private static ResponseEntity<ProblemDetail> problem(HttpStatus status, String detail) {
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .body(ProblemDetail.forStatusAndDetail(status, detail));
    }
}
