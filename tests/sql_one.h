/* SPDX-License-Identifier: MIT */
/* The unit tests' one question to a database: a query's first value. */
#ifndef CAUSEWAY_TESTS_SQL_ONE_H
#define CAUSEWAY_TESTS_SQL_ONE_H

#include <stdio.h>
#include <sqlite3.h>

/* The first column of the first row of @sql, as text ("" if none,
 * "error: ..." on an error); it lives until the next call. */
static inline const char *one(sqlite3 *h, const char *sql)
{
	static char buf[65536];
	sqlite3_stmt *s;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(buf, sizeof(buf), "error: %s", sqlite3_errmsg(h));
		return buf;
	}
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		if (sqlite3_column_text(s, 0))
			snprintf(buf, sizeof(buf), "%s", sqlite3_column_text(s, 0));
		break;
	case SQLITE_DONE:
		break;
	default:
		snprintf(buf, sizeof(buf), "error: %s", sqlite3_errmsg(h));
	}
	sqlite3_finalize(s);
	return buf;
}

#endif
