/**
 * The api role: REST over the stored history (Spring Boot web, beans declared in
 * {@link io.rulesync.api.ApiApplication}). Every error is an RFC 9457 problem naming the parameter
 * or body field ({@link io.rulesync.api.ProblemResponses}).
 *
 * <p>The packages, by what they answer:
 * <ul>
 *   <li>{@code snapshot}: a version's rules for agents, and the cache of recently rebuilt versions;</li>
 *   <li>{@code history}: versions, their rules and the diff between two;</li>
 *   <li>{@code clusters}, {@code nodes}: the fleet and each node's convergence (acks against the
 *       newest version);</li>
 *   <li>{@code events}: the changes the watcher saw, as received; {@code problems}: what of a
 *       cluster was refused, and why;</li>
 *   <li>{@code actions}: rollback and resume (recorded here, carried out by the compiler) and their audit;</li>
 *   <li>{@code access}: tokens and who may do what; {@code params}: the request parameters' value
 *       types and constraints; {@code errors}: problem responses for what fails before or outside
 *       a controller, and the problem controllers throw;</li>
 *   <li>{@code cli}: the {@code api} and {@code token} subcommands.</li>
 * </ul>
 */
package io.rulesync.api;
