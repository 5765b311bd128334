/* The floor of the benchmark: a C program that only reads its stdin to the end and exits
 * (the budgets of docs/design.md are ratios to it, measured in the same rounds).
 * Compiled by the benchmark with `cc -O2`. */
#include <unistd.h>

int main(void) {
    char buf[65536];
    while (read(0, buf, sizeof buf) > 0) {
    }
    return 0;
}
