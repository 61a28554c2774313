package io.rulesync.api;

import io.rulesync.api.events.Since;
import io.rulesync.api.history.RulesMode;
import io.rulesync.api.nodes.Convergence;
import io.rulesync.api.params.BadValue;
import io.rulesync.api.params.DnsLabel;
import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import java.util.Locale;
import org.springframework.format.FormatterRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * How request parameters become the api's value types. A refusal is a {@link BadValue}, which
 * {@link ProblemResponses} answers as a 400 naming the parameter.
 */
public final class ParameterTypes implements WebMvcConfigurer {
    @Override
    public void addFormatters(FormatterRegistry registry) {
        registry.addConverter(String.class, VersionRef.class, VersionRef::parse);
        registry.addConverter(String.class, DnsLabel.class, DnsLabel::parse);
        registry.addConverter(String.class, DnsSubdomain.class, DnsSubdomain::parse);
        registry.addConverter(String.class, Since.class, Since::parse);
        registry.addConverter(String.class, RulesMode.class, RulesMode::parse);
        registry.addConverter(String.class, IpFamily.class, ParameterTypes::family);
        registry.addConverter(String.class, Convergence.State.class, ParameterTypes::state);
    }

    private static IpFamily family(String s) {
        try {
            return IpFamily.fromId(s);
        } catch (IllegalArgumentException e) {
            throw new BadValue("'" + KubernetesNames.printable(s) + "' is not ipv4 or ipv6");
        }
    }

    private static Convergence.State state(String s) {
        try {
            return Convergence.State.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new BadValue("'" + KubernetesNames.printable(s) + "' is not converged, behind, failed or unknown");
        }
    }
}
