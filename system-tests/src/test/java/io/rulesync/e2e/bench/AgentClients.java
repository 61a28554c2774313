package io.rulesync.e2e.bench;

import io.rulesync.client.ApiClient;
import java.net.URI;
import java.net.http.HttpClient;

/**
 * HTTP clients for simulated agents, one per {@value #AGENTS_PER_CLIENT}: the JDK's client does all of its I/O on one
 * selector thread, so one for all would measure that thread, and one each would measure a thousand threads.
 */
final class AgentClients {
    static final int AGENTS_PER_CLIENT = 10;

    private HttpClient current;
    private int made;

    /** The next agent's connection to {@code api}, on a client it shares with up to nine others. */
    ApiClient next(URI api, String token) {
        if (made++ % AGENTS_PER_CLIENT == 0) {
            current = ApiClient.newHttpClient();
        }
        return new ApiClient(api, token, current);
    }
}
