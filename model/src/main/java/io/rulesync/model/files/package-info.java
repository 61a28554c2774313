/**
 * The model's only file-touching code: reading manifest files and folders ({@link io.rulesync.model.files.ManifestReader})
 * and Kafka client settings ({@link io.rulesync.model.files.KafkaClientConfig}). It is shared by the command lines of
 * several roles, so it stays in the model, but apart: the purity rule (the compiler's PureCoreTest) covers every other model package
 * and bans file I/O there.
 */
package io.rulesync.model.files;
