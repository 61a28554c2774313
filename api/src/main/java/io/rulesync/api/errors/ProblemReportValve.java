package io.rulesync.api.errors;

import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import java.io.IOException;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.http.HttpStatus;

/**
 * Tomcat's error report, as a problem instead of an HTML page. Tomcat answers by itself what it
 * refuses before any servlet runs: a URL with an encoded '/' ({@code %2F}), a NUL ({@code %00}) or a
 * bad escape ({@code %zz}), a request line or headers over the 8 KB limit. The host runs this valve
 * in place of its {@link ErrorReportValve} ({@code ApiApplication} installs it).
 *
 * <p>The detail names what Tomcat found wrong ("path: ..." for the URL, "headers: ..." for the size);
 * a server error's cause stays in the log.
 *
 * <p>Kept apart from {@code ProblemResponses}, the api's one problem handler, because these requests
 * never reach a servlet, let alone Spring MVC's exception handling.
 */
public final class ProblemReportValve extends ErrorReportValve {
    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        // As the HTML report does: nothing to add to a success, to a body already written, or twice.
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        HttpStatus known = HttpStatus.resolve(status);
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title", known == null ? "Error" : known.getReasonPhrase());
        problem.put("status", status);
        problem.put("detail", detail(status, response.getMessage(), throwable));
        try {
            response.setContentType("application/problem+json");
            response.setCharacterEncoding("UTF-8");
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write(Json.write(problem));
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // The client went away, or the response cannot take a body: nothing more to say.
        }
    }

    static String detail(int status, String message, Throwable throwable) {
        if (status >= 500) {
            return "internal error (the api's log has the cause)";
        }
        String said =
                message != null && !message.isBlank() ? message : throwable != null ? throwable.getMessage() : null;
        String lower = said == null ? "" : said.toLowerCase(Locale.ROOT);
        if (lower.contains("header") && lower.contains("too large")) {
            return "headers: the request line and headers are larger than the api takes (8 KB); a long URL is the usual cause";
        }
        if (lower.contains("slash")) {
            return "path: an encoded '/' (%2F) is not allowed in the path; no cluster, version or node name holds one";
        }
        if (lower.contains("hexadecimal")) {
            return "path: a '%' in the path is not followed by two hex digits";
        }
        if (lower.contains("uri")) {
            return "path: the URL is not one the api can read (" + KubernetesNames.printable(said)
                    + "): a NUL (%00), bytes that are "
                    + "not UTF-8 and characters that must be percent-encoded are refused";
        }
        HttpStatus known = HttpStatus.resolve(status);
        return said != null
                ? KubernetesNames.printable(said)
                : known != null ? known.getReasonPhrase() : "error " + status;
    }
}
