// Conditions, tags and a YYFILL-free string lexer.
#include <stddef.h>
enum cond { yycinit, yycstr };
static int lex(const char *YYCURSOR, int *c)
{
    const char *YYMARKER, *YYCTXMARKER, *t1, *t2;
    /*!stags:re2c format = 'const char *@@;'; */
    for (;;) {
    /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:yyfill:enable = 0;
        re2c:define:YYGETCONDITION = "*c";
        re2c:define:YYGETCONDITION:naked = 1;
        re2c:define:YYSETCONDITION = "*c = @@;";
        re2c:define:YYSETCONDITION:naked = 1;
        re2c:flags:tags = 1;

        <init> "\""          => str { continue; }
        <init> @t1 [a-z]+ @t2 "=" [0-9]{1,8} { return (int)(t2 - t1); }
        <init> [ \t]+        { continue; }
        <init> "\x00"        { return 0; }
        <init> *             { return -1; }
        <str> "\\" [nt"\\]   { continue; }
        <str> "\""           => init { continue; }
        <str> [^"\\\x00]+    { continue; }
        <str> *              { return -2; }
    */
    }
}
