# One image for every role: `rulesync <subcommand>` (watcher, compiler, api, agent, ...).
# Build stage: the same Maven build as on a developer machine, tests skipped (CI runs them).
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
COPY testing/pom.xml testing/
COPY process/pom.xml process/
COPY exec/pom.xml exec/
COPY test-support/pom.xml test-support/
COPY model/pom.xml model/
COPY client/pom.xml client/
COPY store/pom.xml store/
COPY compiler-core/pom.xml compiler-core/
COPY compiler/pom.xml compiler/
COPY watcher/pom.xml watcher/
COPY node-agent/pom.xml node-agent/
COPY api/pom.xml api/
COPY cli/pom.xml cli/
COPY system-tests/pom.xml system-tests/
COPY launcher/pom.xml launcher/
# Dependencies first, so that a source change does not download the world again. Every module's pom
# must be copied above (DockerfileTest checks it), or this step fails.
RUN mvn -B -ntp -q dependency:go-offline -DexcludeGroupIds=io.rulesync
COPY . .
RUN mvn -B -ntp -q -DskipTests package

# Runtime: a JRE plus the tools the node agent drives (iptables-nft, conntrack; ipset and ipvsadm for ipvs mode; nft for nftables mode).
FROM eclipse-temurin:17-jre
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables ipset ipvsadm nftables conntrack iproute2 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /opt/rulesync rulesync
COPY --from=build /src/launcher/target/rulesync.jar /opt/rulesync/rulesync.jar
COPY --from=build /src/launcher/target/lib /opt/rulesync/lib
# The central roles run unprivileged; the agent's service overrides this with root and NET_ADMIN.
USER rulesync
ENTRYPOINT ["java", "-jar", "/opt/rulesync/rulesync.jar"]
CMD ["--help"]
