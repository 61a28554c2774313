/**
 * The watcher role: fabric8 informers on Services, EndpointSlices and Nodes of every cluster in a
 * fleet, publishing change events to Kafka. Not built yet (issue 3); the module exists so that the
 * layout is final.
 */
package io.rulesync.watcher;
