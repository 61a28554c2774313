package io.rulesync.api.events;

import io.rulesync.api.ProblemResponses;
import io.rulesync.store.EventLog;
import io.rulesync.store.VersionHistory;
import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.Operation;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/clusters/{cluster}/events?since=&kind=&namespace=&name=&after=&limit=}: the
 * audit trail of the changes the watcher saw, as received, oldest first, with the version each
 * went into. Pages by event id ({@code after}).
 */
@RestController
public class EventsController {
    private static final Set<String> KINDS = Set.of("Service", "EndpointSlice", "Node");
    private static final Pattern NUMBER = Pattern.compile("[0-9]{1,18}");
    private static final int MAX_LIMIT = 500;
    /** RFC 3339's range, well inside PostgreSQL's (4713 BC to 294276 AD), which would refuse the query instead. */
    private static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999999Z");

    private final VersionHistory history;
    private final EventLog store;

    public EventsController(VersionHistory history, EventLog store) {
        this.history = history;
        this.store = store;
    }

    @Operation(summary = "The changes as received, oldest first, with the version each went into")
    @GetMapping("/api/v1/clusters/{cluster}/events")
    public ResponseEntity<?> events(@PathVariable("cluster") String cluster, @RequestParam(name = "since", required = false) String since,
            @RequestParam(name = "kind", required = false) String kind, @RequestParam(name = "namespace", required = false) String namespace,
            @RequestParam(name = "name", required = false) String name, @RequestParam(name = "after", required = false) String after,
            @RequestParam(name = "limit", required = false) String limit) {
        if (history.head(cluster) == 0) {
            return ProblemResponses.unknownCluster(cluster);
        }
        Instant from = null;
        if (since != null) {
            try {
                from = Instant.parse(since);
            } catch (DateTimeParseException e) {
                return ProblemResponses.about(HttpStatus.BAD_REQUEST, "since",
                        "since: '" + KubernetesNames.printable(since) + "' is not an instant like 2026-11-29T12:00:00Z");
            }
            if (from.isBefore(EARLIEST) || from.isAfter(LATEST)) {
                return ProblemResponses.about(HttpStatus.BAD_REQUEST, "since", "since: '" + KubernetesNames.printable(since)
                        + "' is outside the years 0000-9999 (RFC 3339's)");
            }
        }
        if (kind != null && !KINDS.contains(kind)) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "kind",
                    "kind: '" + KubernetesNames.printable(kind) + "' is not Service, EndpointSlice or Node");
        }
        if (namespace != null && KubernetesNames.checkNamespace(namespace) != null) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "namespace", "namespace: " + KubernetesNames.checkNamespace(namespace));
        }
        if (name != null && KubernetesNames.checkSubdomain(name) != null) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "name", "name: " + KubernetesNames.checkSubdomain(name));
        }
        if (after != null && !NUMBER.matcher(after).matches()) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "after", "after: '" + KubernetesNames.printable(after) + "' is not an event id");
        }
        if (limit != null && (!NUMBER.matcher(limit).matches() || limit.length() > 3 || Integer.parseInt(limit) < 1
                || Integer.parseInt(limit) > MAX_LIMIT)) {
            return ProblemResponses.about(HttpStatus.BAD_REQUEST, "limit", "limit: '" + KubernetesNames.printable(limit) + "' is not 1-" + MAX_LIMIT);
        }
        int n = limit == null ? 100 : Integer.parseInt(limit);
        List<EventLog.StoredEvent> page = store.events(cluster, after == null ? 0 : Long.parseLong(after), from, kind, namespace, name, n);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", cluster);
        body.put("events", page.stream().map(EventsController::json).toList());
        String next = null;
        if (page.size() == n) {
            Map<String, String> q = new LinkedHashMap<>();
            q.put("since", since);
            q.put("kind", kind);
            q.put("namespace", namespace);
            q.put("name", name);
            q.put("after", Long.toString(page.get(page.size() - 1).id()));
            q.put("limit", Integer.toString(n));
            StringBuilder link = new StringBuilder("/api/v1/clusters/" + enc(cluster) + "/events?");
            q.forEach((k, v) -> {
                if (v != null) {
                    link.append(link.charAt(link.length() - 1) == '?' ? "" : "&").append(k).append('=').append(enc(v));
                }
            });
            next = link.toString();
        }
        body.put("next", next);
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }

    private static Map<String, Object> json(EventLog.StoredEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", e.id());
        m.put("type", e.type());
        m.put("kind", e.kind());
        m.put("object", e.key());
        m.put("resourceVersion", e.resourceVersion());
        m.put("observedAt", e.observedAt().toString());
        m.put("receivedAt", e.receivedAt().toString());
        m.put("version", e.version());
        return m;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
