package io.rulesync.api.errors;

import io.rulesync.model.cluster.KubernetesNames;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Refuses a query the handler cannot have meant, before it runs: a parameter its method does not
 * declare ({@code ?limt=1}, 400 naming {@code limt}), a name or value that is not valid
 * percent-encoding, or one holding a control character (PostgreSQL's text cannot even hold NUL).
 *
 * <p>The declared names are read from each handler method's {@code @RequestParam}s, so a new
 * endpoint is covered without a list to keep. Only the api's own controllers are held to this; the
 * actuator's and springdoc's endpoints take parameters of their own.
 */
public final class DeclaredParameters implements HandlerInterceptor {
    private static final String OWN_PACKAGE = "io.rulesync.";
    private static final String NOT_ENCODED =
            "is not valid percent-encoded UTF-8 (a '%' comes with two hex digits: %2F, %C3%A9)";
    /** Per handler method: its parameter names, sorted; null when it takes any (a {@code @RequestParam Map}). */
    private final Map<Method, Set<String>> declared = new ConcurrentHashMap<>();

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        // An error dispatch carries the failed request's attributes, not a query of its own.
        if (request.getDispatcherType() != DispatcherType.REQUEST || request.getQueryString() == null) {
            return true;
        }
        Set<String> names = decodedNames(request.getQueryString());
        if (!(handler instanceof HandlerMethod m) || !m.getBeanType().getName().startsWith(OWN_PACKAGE)) {
            return true;
        }
        Set<String> known = declared.computeIfAbsent(m.getMethod(), k -> namesOf(m));
        if (known == null) {
            return true;
        }
        for (String name : names) {
            if (!known.contains(name)) {
                Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
                String route = request.getMethod() + " " + (pattern == null ? request.getRequestURI() : pattern);
                throw refusal(
                        name,
                        KubernetesNames.printable(name) + ": is not a query parameter of " + route
                                + (known.isEmpty()
                                        ? ", which takes none"
                                        : " (it takes " + String.join(", ", known) + ")"));
            }
        }
        return true;
    }

    /** The query's parameter names, decoded; refuses bad percent-encoding and control characters, naming the parameter. */
    public static Set<String> decodedNames(String query) {
        Set<String> names = new TreeSet<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String name = decode(rawName)
                    .orElseThrow(() -> refusal(
                            KubernetesNames.printable(rawName),
                            KubernetesNames.printable(rawName) + ": the name " + NOT_ENCODED));
            String value = eq < 0
                    ? ""
                    : decode(pair.substring(eq + 1))
                            .orElseThrow(() ->
                                    refusal(name, KubernetesNames.printable(name) + ": the value " + NOT_ENCODED));
            for (String[] part : new String[][] {{"name", name}, {"value", value}}) {
                int bad = part[1].codePoints()
                        .filter(c -> c < 0x20 || c == 0x7f)
                        .findFirst()
                        .orElse(-1);
                if (bad >= 0) {
                    throw refusal(
                            name,
                            KubernetesNames.printable(name) + ": the " + part[0] + " holds the control character "
                                    + String.format("\\x%02x", bad) + ", which no parameter takes");
                }
            }
            names.add(name);
        }
        return names;
    }

    /**
     * {@code s} percent-decoded as UTF-8, '+' standing for a space as in forms; empty when a '%' is
     * not followed by two hex digits or the bytes are not UTF-8 (where Tomcat would fail later).
     */
    private static Optional<String> decode(String s) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StringBuilder run = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '%') {
                run.append(c == '+' ? ' ' : c);
                continue;
            }
            bytes.writeBytes(run.toString().getBytes(StandardCharsets.UTF_8));
            run.setLength(0);
            int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
            int lo = i + 2 < s.length() ? Character.digit(s.charAt(i + 2), 16) : -1;
            if (hi < 0 || lo < 0) {
                return Optional.empty();
            }
            bytes.write(hi * 16 + lo);
            i += 2;
        }
        bytes.writeBytes(run.toString().getBytes(StandardCharsets.UTF_8));
        try {
            return Optional.of(StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    private static Set<String> namesOf(HandlerMethod m) {
        Set<String> names = new TreeSet<>();
        for (MethodParameter p : m.getMethodParameters()) {
            RequestParam rp = p.getParameterAnnotation(RequestParam.class);
            if (rp == null) {
                continue;
            }
            if (Map.class.isAssignableFrom(p.getParameterType())) {
                return null;
            }
            String name = !rp.name().isEmpty() ? rp.name() : !rp.value().isEmpty() ? rp.value() : p.getParameterName();
            names.add(name);
        }
        return names;
    }

    private static ParameterProblem refusal(String parameter, String detail) {
        return new ParameterProblem(HttpStatus.BAD_REQUEST, parameter, detail);
    }
}
