// A small lexer for tests/real.rs: re2c.exe under mainemu must generate
// the same C as the native re2c 4.0 (`re2c -o lexer.c lexer.re`).
#include <stdio.h>

enum tok { T_END, T_NUM, T_ID, T_OP, T_ERR };

static enum tok lex(const char **cursor)
{
    const char *YYCURSOR = *cursor, *YYMARKER;
    for (;;) {
    /*!re2c
        re2c:define:YYCTYPE = char;
        re2c:yyfill:enable = 0;

        [ \t\n]+               { continue; }
        [0-9]+ | "0x" [0-9a-fA-F]+ { *cursor = YYCURSOR; return T_NUM; }
        [a-zA-Z_][a-zA-Z_0-9]* { *cursor = YYCURSOR; return T_ID; }
        "<=" | ">=" | "==" | [-+*/<>=] { *cursor = YYCURSOR; return T_OP; }
        "\x00"                 { *cursor = YYCURSOR; return T_END; }
        *                      { *cursor = YYCURSOR; return T_ERR; }
    */
    }
}

int main(void)
{
    const char *s = "x1 = 0x1F + 42 <= y";
    enum tok t;
    while ((t = lex(&s)) != T_END)
        printf("%d\n", t);
    return 0;
}
