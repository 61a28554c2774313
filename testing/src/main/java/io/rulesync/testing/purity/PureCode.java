package io.rulesync.testing.purity;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The purity rule as an allow-list: pure code may use the JDK's pure parts, the two libraries chosen for
 * the model (pcollections, snakeyaml-engine), and the pure packages it names; nothing else. So a new
 * framework is refused without being listed, and so are files ({@code java.io.File}, its streams and
 * readers, {@code java.nio.file}), the network ({@code java.net}) and processes ({@code ProcessBuilder},
 * {@code Runtime.exec}). Inside the allowed trees it also refuses threads, executors and locks, logging,
 * reflection, and reading the process's environment or system properties: pure code computes an answer
 * from its arguments, and the shells around it run things, log, and look configuration up. Each module's
 * test applies it to its own pure packages.
 */
public final class PureCode {
    /** JDK and library packages pure code may use, with their subpackages. */
    static final String[] ALLOWED_TREES = {
        "java.lang..",
        "java.util..",
        "java.time..",
        "java.math..",
        "java.text..",
        "java.nio.charset..",
        "org.pcollections..",
        "org.snakeyaml.engine..",
        // Jackson: the model's one configured mapper writes every wire form and streams snapshots in.
        "tools.jackson.core..",
        "tools.jackson.databind..",
    };

    /** JDK packages pure code may use without their subpackages: buffers (not files), digests (not key stores' files). */
    static final String[] ALLOWED_PACKAGES = {"java.nio", "java.security"};

    /**
     * The exceptions and in-memory text streams of {@code java.io}, and {@code InputStream} and {@code Reader} as types
     * ({@code FilterReader} to wrap one): pure code may read a stream its caller opened (a snapshot parsed as it arrives, a
     * manifest file read object by object), never open one. Files, streams over files and consoles stay out.
     */
    static final List<Class<?>> ALLOWED_JAVA_IO = List.of(
            java.io.Serializable.class,
            java.io.IOException.class,
            java.io.UncheckedIOException.class,
            java.io.StringReader.class,
            java.io.StringWriter.class,
            java.io.InputStream.class,
            java.io.Reader.class,
            java.io.FilterReader.class);

    /** Inside {@code java.lang}: what starts processes (or exits the JVM). */
    static final List<Class<?>> BANNED_JAVA_LANG = List.of(
            ProcessBuilder.class, ProcessBuilder.Redirect.class, Process.class, ProcessHandle.class, Runtime.class);

    /** Inside {@code java.lang} and {@code java.util}: what starts or steers threads. */
    static final List<Class<?>> BANNED_THREADS =
            List.of(Thread.class, ThreadGroup.class, java.util.Timer.class, java.util.TimerTask.class);

    /**
     * Packages inside the allowed trees that pure code may not use: executors, futures and locks (running
     * things is a shell's job), logging (a side channel to consoles and files), and reflection.
     */
    static final String[] BANNED_PACKAGES = {
        "java.util.concurrent",
        "java.util.concurrent.locks..",
        "java.util.logging..",
        "java.lang.reflect..",
        "java.lang.invoke.."
    };

    /**
     * What stays allowed of {@code java.util.concurrent}: its thread-safe collections and {@link TimeUnit} are data,
     * like the atomics of {@code java.util.concurrent.atomic}, which the ban does not reach.
     */
    static final List<Class<?>> ALLOWED_CONCURRENT = List.of(
            ConcurrentMap.class,
            ConcurrentNavigableMap.class,
            ConcurrentHashMap.class,
            ConcurrentSkipListMap.class,
            ConcurrentSkipListSet.class,
            ConcurrentLinkedQueue.class,
            ConcurrentLinkedDeque.class,
            CopyOnWriteArrayList.class,
            CopyOnWriteArraySet.class,
            TimeUnit.class);

    /** Methods of allowed classes that read the process's environment or system properties, or load a class by name. */
    static final Map<String, Set<String>> BANNED_CALLS = Map.of(
            "java.lang.System",
                    Set.of("getenv", "getProperty", "getProperties", "setProperty", "setProperties", "clearProperty"),
            "java.lang.Integer", Set.of("getInteger"),
            "java.lang.Long", Set.of("getLong"),
            "java.lang.Boolean", Set.of("getBoolean"),
            "java.lang.Class", Set.of("forName"));

    private PureCode() {}

    /**
     * Classes in {@code purePackages} (ArchUnit package patterns, e.g. {@code io.rulesync.model..}) depend only
     * on the JDK's pure parts, the chosen libraries and {@code mayUse} (patterns too; the pure packages
     * themselves are always allowed), and never on any of {@code excluded}: adapters inside a pure or allowed tree,
     * which the rule neither checks nor lets pure code use.
     */
    public static ArchRule rule(List<String> purePackages, List<String> mayUse, List<String> excluded) {
        String[] own = Stream.concat(purePackages.stream(), mayUse.stream()).toArray(String[]::new);
        DescribedPredicate<JavaClass> adapter = resideInAnyPackage(excluded.toArray(String[]::new));
        DescribedPredicate<JavaClass> pure = resideInAnyPackage(purePackages.toArray(String[]::new))
                .and(DescribedPredicate.not(adapter))
                .as("reside in " + String.join(", ", purePackages)
                        + (excluded.isEmpty() ? "" : " but not " + String.join(", ", excluded)));
        DescribedPredicate<JavaClass> ownCode = resideInAnyPackage(own)
                .and(DescribedPredicate.not(adapter))
                .as(String.join(", ", own) + (excluded.isEmpty() ? "" : " but not " + String.join(", ", excluded)));
        return rule(pure, ownCode);
    }

    /**
     * The same rule for single classes in a package that also holds adapters, such as a pure step function beside
     * its driver: {@code pureClasses} (and their nested classes) depend only on the JDK's pure parts, the chosen
     * libraries, each other, {@code mayUseClasses} and {@code mayUsePackages}.
     */
    public static ArchRule forClasses(
            List<Class<?>> pureClasses, List<Class<?>> mayUseClasses, List<String> mayUsePackages) {
        DescribedPredicate<JavaClass> pure = belongToAnyOf(pureClasses.toArray(Class<?>[]::new));
        List<String> own = Stream.concat(pureClasses.stream(), mayUseClasses.stream())
                .map(Class::getName)
                .toList();
        // An enum's values() returns an array of it: the array's element type is what counts.
        DescribedPredicate<JavaClass> ownCode = DescribedPredicate.<JavaClass>describe(
                        String.join(", ", own),
                        c -> own.stream()
                                .anyMatch(n -> c.getBaseComponentType()
                                                .getName()
                                                .equals(n)
                                        || c.getBaseComponentType().getName().startsWith(n + "$")))
                .or(resideInAnyPackage(mayUsePackages.toArray(String[]::new)));
        return rule(pure, ownCode);
    }

    private static ArchRule rule(DescribedPredicate<JavaClass> pure, DescribedPredicate<JavaClass> ownCode) {
        DescribedPredicate<JavaClass> allowed = resideInAnyPackage(ALLOWED_TREES)
                .or(resideInAnyPackage(ALLOWED_PACKAGES))
                .or(belongToAnyOf(ALLOWED_JAVA_IO.toArray(Class<?>[]::new)))
                .or(ownCode)
                .and(DescribedPredicate.not(belongToAnyOf(BANNED_JAVA_LANG.toArray(Class<?>[]::new))))
                .and(DescribedPredicate.not(belongToAnyOf(BANNED_THREADS.toArray(Class<?>[]::new))))
                .and(DescribedPredicate.not(resideInAnyPackage(BANNED_PACKAGES)
                        .and(DescribedPredicate.not(belongToAnyOf(ALLOWED_CONCURRENT.toArray(Class<?>[]::new))))))
                .as(
                        "the JDK's pure parts (java.lang without processes, threads, reflection or method handles; java.util without"
                                + " executors, locks or logging, but with its concurrent collections and atomics; java.time, java.math, java.text,"
                                + " java.nio buffers and charsets, java.security digests, java.io's exceptions, string streams, and InputStream and Reader as types),"
                                + " pcollections, snakeyaml-engine, or " + ownCode.getDescription());
        DescribedPredicate<JavaCall<?>> environment = DescribedPredicate.describe(
                "reads the environment or system properties, or loads a class by name",
                call -> BANNED_CALLS
                        .getOrDefault(call.getTargetOwner().getName(), Set.of())
                        .contains(call.getName()));
        return CompositeArchRule.of(
                        classes()
                                .that(pure)
                                .should()
                                .onlyDependOnClassesThat(allowed)
                                .because(
                                        "pure code is tested and run without frameworks, files, the network or processes; adapters wrap it"))
                .and(
                        noClasses()
                                .that(pure)
                                .should()
                                .callCodeUnitWhere(environment)
                                .because(
                                        "pure code gets its settings as arguments; the shells read the environment and system properties"));
    }
}
