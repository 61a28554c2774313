package io.rulesync.api;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code rulesync.api.*}. {@code cached-versions}: how many whole versions the snapshot endpoint
 * keeps in memory (each is a cluster's rules: tens of MB at 10k Services).
 */
@ConfigurationProperties("rulesync.api")
public record ApiProperties(Integer cachedVersions) {
    public ApiProperties {
        cachedVersions = cachedVersions == null ? 4 : cachedVersions;
    }
}
