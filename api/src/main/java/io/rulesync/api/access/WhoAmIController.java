package io.rulesync.api.access;

import io.swagger.v3.oas.annotations.Operation;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Locale;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Who the caller's token says it is: the dashboard asks once at login, to greet the operator by name and to show the
 * rollback and resume controls to operators only (the api refuses them to anyone else whatever a page shows).
 */
@RestController
public class WhoAmIController {

    /** The token's name and role; a bound token's cluster (and node). */
    public record WhoAmI(String name, String role, String cluster, String node) {}

    @Operation(summary = "The caller's token: its name and role")
    @Access({Role.VIEWER, Role.OPERATOR})
    @GetMapping("/api/v1/whoami")
    public WhoAmI whoami(HttpServletRequest request) {
        ApiTokens.Caller c = (ApiTokens.Caller) request.getAttribute(BearerTokenFilter.CALLER);
        return new WhoAmI(
                c.name(),
                c.role().id().toLowerCase(Locale.ROOT),
                c.scope().cluster(),
                c.scope().node());
    }
}
