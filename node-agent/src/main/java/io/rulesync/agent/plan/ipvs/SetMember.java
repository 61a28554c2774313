package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.util.Locale;

/**
 * A set member in the one form {@code ipset save} prints it, so that desired members and saved ones
 * compare as text. What ipset 7.17 was measured to print back (in a namespace):
 * <ul>
 *   <li>IPv6 addresses compressed and lower case ({@code FD00:0010::0001} → {@code fd00:10::1}),
 *       IPv4-mapped ones as {@code ::ffff:10.0.0.1}: the form {@link IpAddress} prints;</li>
 *   <li>a port without protocol as TCP ({@code 10.0.0.1,80} → {@code 10.0.0.1,tcp:80}), the
 *       protocol lower case, the port as a number;</li>
 *   <li>a net with its host bits cleared ({@code 10.1.2.3/24} → {@code 10.1.2.0/24}) and a host
 *       prefix dropped ({@code 10.1.2.3/32} → {@code 10.1.2.3}, {@code /128} likewise);</li>
 *   <li>bitmap ports as plain numbers.</li>
 * </ul>
 * Service names ({@code tcp:http}) are printed as numbers by ipset; they are not resolved here, as
 * rulesync never writes them.
 */
public final class SetMember {
    private SetMember() {}

    /** {@code member} of a set of {@code type} ({@code hash:ip,port,net}, {@code bitmap:port}, ...) in ipset's printed form. */
    public static String canonical(String type, String member) {
        int colon = type.indexOf(':');
        boolean bitmap = type.startsWith("bitmap:");
        String[] kinds = type.substring(colon + 1).split(",");
        String[] parts = member.strip().split(",", -1);
        if (parts.length != kinds.length) {
            return member.strip().toLowerCase(Locale.ROOT);
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(
                    switch (kinds[i]) {
                        case "ip" -> address(parts[i]);
                        case "net" -> net(parts[i]);
                        case "port" -> bitmap ? number(parts[i]) : protoPort(parts[i]);
                        default -> parts[i].toLowerCase(Locale.ROOT);
                    });
        }
        return out.toString();
    }

    private static String address(String p) {
        try {
            return IpAddress.parse(p).toString();
        } catch (IllegalArgumentException e) {
            return p.toLowerCase(Locale.ROOT);
        }
    }

    private static String net(String p) {
        if (p.indexOf('/') < 0) {
            return address(p);
        }
        try {
            Cidr c = Cidr.parse(p);
            int full = c.network().family() == IpFamily.IPV4 ? 32 : 128;
            return c.prefix() == full ? c.network().toString() : c.toString();
        } catch (IllegalArgumentException e) {
            return p.toLowerCase(Locale.ROOT);
        }
    }

    private static String protoPort(String p) {
        int colon = p.indexOf(':');
        String proto = colon < 0 ? "tcp" : p.substring(0, colon).toLowerCase(Locale.ROOT);
        return proto + ":" + number(colon < 0 ? p : p.substring(colon + 1));
    }

    private static String number(String p) {
        if (!p.isEmpty() && p.length() <= 5 && p.chars().allMatch(Character::isDigit)) {
            return String.valueOf(Integer.parseInt(p));
        }
        return p.toLowerCase(Locale.ROOT);
    }
}
