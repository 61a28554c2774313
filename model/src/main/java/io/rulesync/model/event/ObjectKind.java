package io.rulesync.model.event;

/** The kinds of object whose changes are events. */
public enum ObjectKind {
    SERVICE("Service"),
    ENDPOINT_SLICE("EndpointSlice"),
    NODE("Node");

    private final String apiName;

    ObjectKind(String apiName) {
        this.apiName = apiName;
    }

    public String apiName() {
        return apiName;
    }

    public static ObjectKind fromApiName(String s) {
        for (ObjectKind k : values()) {
            if (k.apiName.equals(s)) {
                return k;
            }
        }
        throw new IllegalArgumentException("'" + s + "' is not a kind rulesync watches (Service, EndpointSlice, Node)");
    }
}
