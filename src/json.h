/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small streaming JSON writer: correct escaping and commas, no DOM. */
#ifndef ILOCK_JSON_H
#define ILOCK_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
/* key is NULL inside arrays and at the top level. */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);  /* NULL: null */
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* Write s as a JSON string literal, quotes included. */
void json_write_string(FILE *f, const char *s);

#endif
