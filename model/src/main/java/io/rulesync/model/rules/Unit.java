package io.rulesync.model.rules;

import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import java.util.Objects;

/**
 * What a fragment belongs to: one service port, or a node's fixed part. Units sort in rule order:
 * the fixed part first, then service ports by {@code namespace/name:port/protocol}.
 */
public sealed interface Unit extends Comparable<Unit> {
    Unit FIXED = new Fixed();

    /** Stable text form used in storage and on the wire: {@code ~fixed} or {@code ns/name:port/TCP}. */
    String id();

    static Unit of(ServicePortName port) {
        return new Port(port);
    }

    static Unit parse(String id) {
        if (id.equals(Fixed.ID)) {
            return FIXED;
        }
        int slash = id.indexOf('/');
        int colon = id.indexOf(':', slash + 1);
        int last = id.lastIndexOf('/');
        if (slash < 0 || colon < 0 || last <= colon) {
            throw new IllegalArgumentException(
                    "'" + id + "' is not a unit (expected ~fixed or namespace/name:port/PROTOCOL)");
        }
        return new Port(new ServicePortName(
                new NamespacedName(id.substring(0, slash), id.substring(slash + 1, colon)),
                id.substring(colon + 1, last),
                Protocol.valueOf(id.substring(last + 1))));
    }

    @Override
    default int compareTo(Unit o) {
        if (this instanceof Port a && o instanceof Port b) {
            return a.name().compareTo(b.name());
        }
        return Boolean.compare(this instanceof Port, o instanceof Port);
    }

    /** The node's fixed chains (KUBE-FORWARD, KUBE-POSTROUTING, ...). */
    record Fixed() implements Unit {
        static final String ID = "~fixed";

        @Override
        public String id() {
            return ID;
        }
    }

    /** One port of one Service. */
    record Port(ServicePortName name) implements Unit {
        public Port {
            Objects.requireNonNull(name, "name");
        }

        @Override
        public String id() {
            return name.service() + ":" + name.port() + "/" + name.protocol().name();
        }
    }
}
