# Two images, one per role of a machine:
#   docker build --target control-plane -t rulesync:dev .      # watcher, compiler, api, token, compile, render
#   docker build --target agent -t rulesync-agent:dev .        # the node agent, and the kernel's tools it drives
# Neither carries the demo's in-process broker or embedded PostgreSQL (the demo module; ./rulesync runs it).

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
COPY demo/pom.xml demo/
# Dependencies first, so that a source change does not download the world again. Every module's pom
# must be copied above (DockerfileTest checks it), or this step fails.
RUN mvn -B -ntp -q dependency:go-offline -DexcludeGroupIds=io.rulesync
COPY . .
RUN mvn -B -ntp -q -DskipTests package

# The node agent: a JRE, the agent's jar and its libraries (AgentImageContentsTest keeps the central roles, the
# broker and PostgreSQL out of them), and the tools it drives: iptables-nft and conntrack; ipset and ipvsadm for
# ipvs mode; nft for nftables mode. It runs as root with NET_ADMIN in the host's network namespace.
FROM eclipse-temurin:17-jre AS agent
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables ipset ipvsadm nftables conntrack iproute2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/node-agent/target/rulesync-agent.jar /opt/rulesync/rulesync-agent.jar
COPY --from=build /src/node-agent/target/lib /opt/rulesync/lib
ENTRYPOINT ["java", "-jar", "/opt/rulesync/rulesync-agent.jar"]
CMD ["--help"]

# The central roles, unprivileged, with no kernel tools: they never touch a node's rules.
FROM eclipse-temurin:17-jre AS control-plane
RUN useradd --system --uid 10001 --home /opt/rulesync rulesync
COPY --from=build /src/launcher/target/rulesync.jar /opt/rulesync/rulesync.jar
COPY --from=build /src/launcher/target/lib /opt/rulesync/lib
USER rulesync
ENTRYPOINT ["java", "-jar", "/opt/rulesync/rulesync.jar"]
CMD ["--help"]
