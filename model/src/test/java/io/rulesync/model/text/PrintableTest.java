package io.rulesync.model.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrintableTest {
    @Test
    void controlCharactersSeparatorsAndOverridesBecomeEscapes() {
        assertThat(Printable.escape("web\nFAKE 12:00 INFO all good")).isEqualTo("web\\x0aFAKE 12:00 INFO all good");
        assertThat(Printable.escape("a\r\tb\u0000\u001b[31m\u007f\u0085"))
                .isEqualTo("a\\x0d\\x09b\\x00\\x1b[31m\\x7f\\x85");
        assertThat(Printable.escape("x\u2028y\u2029z")).isEqualTo("x\\u2028y\\u2029z");
        assertThat(Printable.escape("file\u202egpj.yaml")).isEqualTo("file\\u202egpj.yaml");
        assertThat(Printable.escape("lone \ud800 surrogate")).isEqualTo("lone \\ud800 surrogate");
    }

    @Test
    void everythingElseIsKeptAsItIs() {
        String text = "Service shop/web: spec.ports[0].port: 0 is out of range (1-65535) – ü 日本 \ud83d\ude00 \\x0a";
        assertThat(Printable.escape(text)).isSameAs(text);
        assertThat(Printable.isPrintable(text)).isTrue();
        assertThat(Printable.isPrintable("a\nb")).isFalse();
        assertThat(Printable.escape(null)).isEqualTo("null");
    }
}
