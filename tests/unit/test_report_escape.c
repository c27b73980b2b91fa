/* tests/unit/test_report_escape.c: HTML, Markdown, XML and gnuplot-string escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../render/escape.h"

static void expect_esc(void (*fn)(FILE *, const char *), const char *in, const char *want)
{
	char *got = esc_str(fn, in);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_html(void **state)
{
	(void)state;
	expect_esc(esc_html, "<script>alert(1)</script>",
		   "&lt;script&gt;alert(1)&lt;/script&gt;");
	expect_esc(esc_html, "a\"b'c&d", "a&quot;b&#39;c&amp;d");
	expect_esc(esc_html, "line1\nline2\tx", "line1&#10;line2&#9;x");
	expect_esc(esc_html, "ctl\x01\x1b[31m\x7f", "ctl[31m");
	expect_esc(esc_html, "&amp;", "&amp;amp;");
	expect_esc(esc_html, "GPU \xc3\xa9t\xc3\xa9 \xe2\x80\x94 ok", "GPU \xc3\xa9t\xc3\xa9 \xe2\x80\x94 ok");
	expect_esc(esc_html, "", "");
	expect_esc(esc_html, NULL, "");
}

static void test_md(void **state)
{
	(void)state;
	expect_esc(esc_md, "a|b", "a\\|b");
	expect_esc(esc_md, "`code` *em* _u_ ~s~", "\\`code\\` \\*em\\* \\_u\\_ \\~s\\~");
	expect_esc(esc_md, "[x](http://e/) ![i](y)", "\\[x\\](http\\://e/) !\\[i\\](y)");
	/* no autolink: "scheme://" and "www." stay text */
	expect_esc(esc_md, "see https://e.example/x or WWW.e.example", "see https\\://e.example/x or WWW\\.e.example");
	expect_esc(esc_md, "a:b www x.www.y", "a:b www x.www\\.y");
	expect_esc(esc_md, "<script>alert(1)</script>", "\\<script>alert(1)\\</script>");
	expect_esc(esc_md, "a&lt;b", "a\\&lt;b");
	expect_esc(esc_md, "back\\slash", "back\\\\slash");
	expect_esc(esc_md, "two\nlines\r\n", "two lines  ");
	/* block markers only at the start, where a list item's text begins */
	expect_esc(esc_md, "# head", "\\# head");
	expect_esc(esc_md, "> quote", "\\> quote");
	expect_esc(esc_md, "- item", "\\- item");
	expect_esc(esc_md, "12. item", "12\\. item");
	expect_esc(esc_md, "3) item", "3\\) item");
	expect_esc(esc_md, "node02->node04 v1.2 #3", "node02->node04 v1.2 #3");
	expect_esc(esc_md, "550.54.15", "550\\.54.15");
	expect_esc(esc_md, "ctl\x02x", "ctlx");
}

static void test_xml(void **state)
{
	(void)state;
	expect_esc(esc_xml, "a]]>b", "a]]&gt;b");
	expect_esc(esc_xml, "<x a=\"1\" b='2'>&</x>",
		   "&lt;x a=&quot;1&quot; b=&apos;2&apos;&gt;&amp;&lt;/x&gt;");
	expect_esc(esc_xml, "nl\ntab\tcr\rbell\x07" "esc\x1b" "del\x7f", "nl&#10;tab&#9;crbellescdel\x7f");
	/* U+FFFE and U+FFFF are not XML characters; U+FFFD is */
	expect_esc(esc_xml, "a\xef\xbf\xbe" "b\xef\xbf\xbf" "c\xef\xbf\xbd", "abc\xef\xbf\xbd");
	expect_esc(esc_xml, NULL, "");
}

static void test_gnuplot(void **state)
{
	(void)state;
	expect_esc(esc_gnuplot, "it's", "it''s");
	expect_esc(esc_gnuplot, "back\\slash \"q\"", "back\\slash \"q\"");
	expect_esc(esc_gnuplot, "a\nb\rc\td", "a b c d");
	expect_esc(esc_gnuplot, "x\x01y\x7f", "xy");
	/* enhanced-text markup stays as is: every chart sets noenhanced */
	expect_esc(esc_gnuplot, "{a}^b_c@d&e~f", "{a}^b_c@d&e~f");
}

/* every output stays valid UTF-8: a cut or malformed character is dropped */
static void test_utf8(void **state)
{
	void (*const fns[])(FILE *, const char *) = { esc_html, esc_md, esc_xml, esc_gnuplot };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		expect_esc(fns[i], "ab\xc3", "ab");                     /* cut after the lead byte */
		expect_esc(fns[i], "\xe2\x80x", "x");                  /* cut 3-byte character */
		expect_esc(fns[i], "a\xc0\xaf" "b", "ab");                /* overlong '/' */
		expect_esc(fns[i], "a\xed\xa0\x80z", "az");           /* a surrogate */
		expect_esc(fns[i], "\xf4\x90\x80\x80", "");          /* above U+10FFFF */
		expect_esc(fns[i], "\x80\xbfq", "q");                  /* stray continuation bytes */
		expect_esc(fns[i], "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
			   "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* e-acute, euro, emoji kept */
	}
}

/* C1 controls and bidi overrides are dropped like C0: a name cannot read backwards or hide text */
static void test_invisible(void **state)
{
	void (*const fns[])(FILE *, const char *) = { esc_html, esc_md, esc_xml, esc_gnuplot };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		expect_esc(fns[i], "a\xc2\x80" "b\xc2\x85" "c\xc2\x9b" "d\xc2\x9f" "e", "abcde");  /* C1 */
		expect_esc(fns[i], "node\xe2\x80\xae" "3edon", "node3edon");                   /* RLO */
		expect_esc(fns[i], "x\xe2\x80\xaa" "y\xe2\x80\xab" "z\xe2\x80\xac" "w\xe2\x80\xad" "v", "xyzwv");
		expect_esc(fns[i], "p\xe2\x81\xa6" "q\xe2\x81\xa7" "r\xe2\x81\xa8" "s\xe2\x81\xa9" "t", "pqrst");
		/* their neighbours stay: U+00A0, U+2029, U+202F, U+2065, U+206A */
		expect_esc(fns[i], "\xc2\xa0\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa",
			   "\xc2\xa0\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_md),
		cmocka_unit_test(test_xml),
		cmocka_unit_test(test_gnuplot),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_invisible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
