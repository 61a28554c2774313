/**
 * The api's request parameters as values: what a version, a name or a page size may be, checked
 * once where the request is bound ({@code io.rulesync.api.ParameterTypes} registers the
 * conversions), so controllers receive values they can use and every refusal reads the same
 * ({@code io.rulesync.api.ProblemResponses} writes it).
 */
package io.rulesync.api.params;
