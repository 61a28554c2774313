package io.rulesync.model.rules;

import java.util.List;
import java.util.Objects;

/**
 * One iptables chain and its rules in order. A rule is the text that follows {@code -A <chain> } in
 * iptables-restore input, e.g. {@code -m comment --comment "ns/svc:http cluster IP" ... -j KUBE-SVC-X}.
 */
public record Chain(String name, List<String> rules) {
    public Chain {
        Objects.requireNonNull(name, "name");
        rules = List.copyOf(rules);
    }
}
