package io.rulesync.api.errors;

import io.rulesync.api.ProblemResponses;
import org.springframework.http.HttpStatus;
import org.springframework.web.ErrorResponseException;

/**
 * A request the api answers with a problem naming one parameter or body field: the cluster, version
 * or node it names does not exist (404), or the cluster's state refuses it (409). Controllers throw
 * it; {@link ProblemResponses} writes it like any other problem.
 */
public final class ParameterProblem extends ErrorResponseException {
    public ParameterProblem(HttpStatus status, String parameter, String detail) {
        super(status, ProblemResponses.detail(status, parameter, detail), null);
    }

    /** Adds a property to the problem (a link to the action at stake, when it expires). */
    public ParameterProblem with(String property, Object value) {
        getBody().setProperty(property, value);
        return this;
    }
}
