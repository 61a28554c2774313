package io.rulesync.api.events;

import io.rulesync.api.ProblemResponses;
import io.rulesync.api.access.Access;
import io.rulesync.api.access.Role;
import io.rulesync.api.params.DnsLabel;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.PageSize;
import io.rulesync.store.EventLog;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.annotations.Operation;
import jakarta.validation.constraints.Pattern;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    private static final int MAX_LIMIT = 500;

    private final VersionHistory history;
    private final EventLog store;

    public EventsController(VersionHistory history, EventLog store) {
        this.history = history;
        this.store = store;
    }

    /** The answer: one page of events, and the link to the next (null on the last). */
    public record EventsPage(String cluster, List<EventJson> events, String next) {}

    public record EventJson(
            long id,
            String type,
            String kind,
            String object,
            String resourceVersion,
            String observedAt,
            String receivedAt,
            Long version) {}

    @Operation(summary = "The changes as received, oldest first, with the version each went into")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/clusters/{cluster}/events")
    public EventsPage events(
            @PathVariable("cluster") String cluster,
            @RequestParam(name = "since", required = false) Since since,
            @RequestParam(name = "kind", required = false)
                    @Pattern(
                            regexp = "Service|EndpointSlice|Node",
                            message = "'%s' is not Service, EndpointSlice or Node")
                    String kind,
            @RequestParam(name = "namespace", required = false) DnsLabel namespace,
            @RequestParam(name = "name", required = false) DnsSubdomain name,
            @RequestParam(name = "after", required = false)
                    @Pattern(regexp = "[0-9]{1,18}", message = "'%s' is not an event id")
                    String after,
            @RequestParam(name = "limit", required = false) @PageSize(max = MAX_LIMIT) String limit) {
        if (history.head(cluster) == 0) {
            throw ProblemResponses.unknownCluster(cluster);
        }
        int n = limit == null ? 100 : Integer.parseInt(limit);
        List<EventLog.StoredEvent> page = store.events(
                cluster,
                after == null ? 0 : Long.parseLong(after),
                since == null ? null : since.at(),
                kind,
                namespace == null ? null : namespace.name(),
                name == null ? null : name.name(),
                n);
        String next = null;
        if (page.size() == n) {
            Map<String, Object> q = new LinkedHashMap<>();
            q.put("since", since);
            q.put("kind", kind);
            q.put("namespace", namespace);
            q.put("name", name);
            q.put("after", Long.toString(page.get(page.size() - 1).id()));
            q.put("limit", Integer.toString(n));
            StringBuilder link = new StringBuilder("/api/v1/clusters/" + enc(cluster) + "/events?");
            q.forEach((k, v) -> {
                if (v != null) {
                    link.append(link.charAt(link.length() - 1) == '?' ? "" : "&")
                            .append(k)
                            .append('=')
                            .append(enc(v.toString()));
                }
            });
            next = link.toString();
        }
        return new EventsPage(cluster, page.stream().map(EventsController::json).toList(), next);
    }

    private static EventJson json(EventLog.StoredEvent e) {
        return new EventJson(
                e.id(),
                e.type(),
                e.kind(),
                e.key(),
                e.resourceVersion(),
                e.observedAt().toString(),
                e.receivedAt().toString(),
                e.version());
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
