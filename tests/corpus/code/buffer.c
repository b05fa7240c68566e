#include <stdio.h>
#include <stdlib.h>
#include "buffer.h"

/* A growable byte buffer. */
typedef struct {
    char *data;
    size_t len;
} Buffer;

struct node {
    int value;
    struct node *next;
};

/* Append bytes to a buffer — naïvely. */
int buffer_append(Buffer *b, const char *bytes, size_t n) {
    char *grown = realloc(b->data, b->len + n);
    if (!grown) {
        return -1;
    }
    b->data = grown;
    b->len += n;
    return 0;
}

static void buffer_free(Buffer *b) {
    free(b->data);
}

int main(void) {
    Buffer b = {0};
    buffer_append(&b, "hi", 2);
    printf("%zu\n", b.len);
    buffer_free(&b);
    return 0;
}
