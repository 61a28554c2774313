package io.rulesync.api.params;

/**
 * A parameter's value refused while it was converted. The message says what is wrong with the
 * value ("'x' is not ..."), not which parameter held it: the problem handler knows that and puts it
 * first ("version: 'x' is not ...").
 */
public final class BadValue extends IllegalArgumentException {
    public BadValue(String detail) {
        super(detail);
    }
}
