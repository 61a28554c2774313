package io.rulesync.api;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import org.springdoc.core.customizers.OpenApiCustomizer;

/**
 * Every answer an operation gives, in the OpenAPI document, and not only its 200: springdoc sees a controller's return
 * type, not the problems {@link ProblemResponses} and the filters answer, nor a 202 or 204 decided at run time. A client
 * generated from the document then knows each error and its body (RFC 9457 problem details, {@code Problem}).
 */
final class ProblemAnswers implements OpenApiCustomizer {
    static final String PROBLEM = "Problem";
    private static final String PROBLEM_JSON = "application/problem+json";

    @Override
    public void customise(OpenAPI api) {
        api.getComponents()
                .addSchemas(
                        PROBLEM,
                        new ObjectSchema()
                                .description(
                                        "What went wrong (RFC 9457); 'parameter' names the field at fault where there is one")
                                .addProperty(
                                        "type",
                                        new StringSchema()
                                                .description("a URI for the kind of problem; about:blank when none"))
                                .addProperty("title", new StringSchema().description("the status's reason phrase"))
                                .addProperty("status", new IntegerSchema().description("the HTTP status"))
                                .addProperty(
                                        "detail",
                                        new StringSchema().description("what was wrong, naming the object and field"))
                                .addProperty("instance", new StringSchema().description("the request's path"))
                                .addProperty(
                                        "parameter", new StringSchema().description("the parameter or field at fault"))
                                .addProperty(
                                        "problems",
                                        new io.swagger.v3.oas.models.media.ArraySchema()
                                                .items(new StringSchema())
                                                .description(
                                                        "a plan's manifests: everything wrong with them, each naming its document, object and field")));
        api.getPaths()
                .forEach((path, item) -> item.readOperationsMap().forEach((method, op) -> answers(path, method, op)));
    }

    private static void answers(String path, PathItem.HttpMethod method, Operation op) {
        ApiResponses r = op.getResponses();
        if (path.endsWith("/acks") && method == PathItem.HttpMethod.POST) {
            r.remove("200");
            r.addApiResponse("204", new ApiResponse().description("stored; nothing to say back"));
        }
        if (path.endsWith("/replay")) {
            replace200(r, "202", "queued for the events topic; the compiler folds it in the partition's order");
        }
        if (path.endsWith("/rollback") || path.endsWith("/resume")) {
            r.addApiResponse(
                    "202",
                    new ApiResponse()
                            .description("recorded; the compiler has not carried it out yet (its audit entry "
                                    + "is in Location)")
                            .content(r.get("200") == null ? null : r.get("200").getContent()));
            problem(
                    r,
                    "409",
                    "refused: another action of this cluster is pending, the cluster is not pinned, or the compiler "
                            + "refused it (its reason)");
        }
        if (path.endsWith("/plan")) {
            problem(
                    r,
                    "409",
                    "the cluster's stored state is incomplete (retention removed events no checkpoint stands for)");
        }
        if (path.matches(".*/rollout/\\{step}$")) {
            problem(r, "409", "the rollout is not in a state this step applies to");
        }
        problem(
                r,
                "400",
                "a parameter or the body is not valid; the problem names it"
                        + (path.endsWith("/plan")
                                ? " ('problems' lists everything wrong with the manifests, each naming its document, object and field)"
                                : ""));
        problem(r, "401", "no bearer token, or one this api does not know or no longer accepts");
        problem(r, "403", "the token's role, or the cluster or node it is bound to, does not allow this");
        if (path.contains("{")) {
            problem(r, "404", "no such cluster, version, node or action");
        }
        if (method != PathItem.HttpMethod.GET) {
            problem(r, "411", "a body without a Content-Length");
            problem(r, "413", "the body is larger than this operation takes");
        }
        problem(
                r,
                "429",
                "too many requests, or too many failed authentications, from this address (Retry-After says when)");
        problem(r, "503", "the database cannot be reached, or this replica is stopping; try again");
    }

    private static void replace200(ApiResponses r, String status, String description) {
        ApiResponse ok = r.remove("200");
        r.addApiResponse(
                status, new ApiResponse().description(description).content(ok == null ? null : ok.getContent()));
    }

    private static void problem(ApiResponses r, String status, String description) {
        if (r.containsKey(status)
                && r.get(status).getContent() != null
                && r.get(status).getContent().containsKey(PROBLEM_JSON)) {
            return;
        }
        Schema<?> ref = new Schema<>().$ref("#/components/schemas/" + PROBLEM);
        r.addApiResponse(
                status,
                new ApiResponse()
                        .description(description)
                        .content(new Content().addMediaType(PROBLEM_JSON, new MediaType().schema(ref))));
    }
}
