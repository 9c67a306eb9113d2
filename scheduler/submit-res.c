/* SPDX-License-Identifier: MIT */
/* A submission's licenses and counted node resources (submit-res.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "license.h"
#include "noderes.h"
#include "nodesel.h"
#include "submit-res.h"
#include "wire.h"

/* A submit's licenses (docs/RESOURCES.md, "Licenses"): Slurm's -L text
 * in "licenses", and PBS's server-level -l NAME=N that qsub recorded as
 * Resource_List.NAME where NAME is one of [licenses]. Each must be the
 * pool's and no more than it has. Their canonical text into canon ("":
 * none); -EINVAL with why in buf (the front ends match "license"). */
int submit_licenses_check(const struct config *cf, json_t *msg, json_t *attrs, char *canon, size_t clen,
			  char *buf, size_t len)
{
	const char *text = wire_str(msg, "licenses");
	struct license l[LICENSES_MAX];
	struct error err;
	size_t n = 0;

	canon[0] = '\0';
	if (json_object_get(msg, "licenses") && (!text || !*text)) {
		snprintf(buf, len, "licenses must be a string such as matlab:2,comsol");
		return -EINVAL;
	}
	if (text && license_request_parse(text, l, LICENSES_MAX, &n, &err) < 0) {
		snprintf(buf, len, "licenses %s: %s", text, err.text);
		return -EINVAL;
	}
	for (size_t i = 0; i < cf->n_licenses; i++) {
		char key[LICENSE_NAME_MAX + 16];
		const char *v;
		uint64_t count;
		size_t k;

		snprintf(key, sizeof(key), "Resource_List.%s", cf->licenses[i].name);
		v = wire_str(attrs, key);
		if (!v)
			continue;
		if (license_count_parse(v, &count) < 0) {
			snprintf(buf, len, "-l %s=%s: a license count is a whole number, 0 to %llu", cf->licenses[i].name,
				 v, (unsigned long long)LICENSE_COUNT_MAX);
			return -EINVAL;
		}
		if (count == 0)
			continue;
		for (k = 0; k < n && strcmp(l[k].name, cf->licenses[i].name) != 0; k++)
			;
		if (k == n) {
			if (n == LICENSES_MAX) {
				snprintf(buf, len, "more than %d licenses in one request", LICENSES_MAX);
				return -EINVAL;
			}
			l[n++] = (struct license){ .count = 0 };
			snprintf(l[k].name, sizeof(l[k].name), "%s", cf->licenses[i].name);
		}
		/* Both forms name one request: the larger stands. */
		if (count > l[k].count)
			l[k].count = count;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < cf->n_licenses && strcmp(cf->licenses[k].name, l[i].name) != 0; k++)
			;
		if (k == cf->n_licenses) {
			snprintf(buf, len, "unknown license %.63s: the pool has no such license (qpool.conf's [licenses])",
				 l[i].name);
			return -EINVAL;
		}
		if (l[i].count > cf->licenses[k].count) {
			snprintf(buf, len, "license %.63s:%llu: more than the pool's %llu", l[i].name,
				 (unsigned long long)l[i].count, (unsigned long long)cf->licenses[k].count);
			return -EINVAL;
		}
	}
	if (n && license_request_format(l, n, canon, clen) < 0) {
		snprintf(buf, len, "the licenses' text is too long");
		return -EINVAL;
	}
	return 0;
}

/* Whether some known node has a counted resource called name. */
static bool pool_has_noderes(struct pool *pool, const char *name, size_t len, uint64_t *ret_most)
{
	bool any = false;

	*ret_most = 0;
	for (const struct node *nd = pool_nodes(pool); nd; nd = nd->next)
		for (unsigned i = 0; i < nd->n_res; i++)
			if (strlen(nd->res[i].name) == len && !strncmp(nd->res[i].name, name, len)) {
				any = true;
				if (nd->res[i].value > *ret_most)
					*ret_most = nd->res[i].value;
			}
	return any;
}

/* A submit's counted node resources (docs/RESOURCES.md, "Counted node
 * resources"): "node_res" (sbatch --gres=nvme:1, --tmp) and, of a
 * constraint that is an '&' list (PBS's chunk resources come so), each
 * term NAME or NAME=VALUE whose NAME is a counted resource of a known
 * node and no node's feature: taken out of the constraint. Some known
 * node must have each as much; a job of chunks gets each on a node of
 * its own (place=scatter; pack is refused). Canonical text into canon
 * ("": none); -EINVAL with why ("node resource") in buf. */
int submit_noderes_check(struct pool *pool, json_t *msg, char *canon, size_t clen, char *buf, size_t len)
{
	const char *text = wire_str(msg, "node_res"), *cons = wire_str(msg, "constraint");
	struct noderes r[NODERES_MAX];
	size_t n = 0;
	struct error err;
	uint64_t most;

	canon[0] = '\0';
	if (json_object_get(msg, "node_res") && !text) {
		snprintf(buf, len, "node_res must be a string such as nvme:1,tmp:10G");
		return -EINVAL;
	}
	if (text && noderes_parse(text, r, NODERES_MAX, &n, &err) < 0) {
		snprintf(buf, len, "node resources %.60s: %s", text, err.text);
		return -EINVAL;
	}
	if (cons && !strpbrk(cons, "|()[]") && strlen(cons) < 1024) {
		char kept[1024] = "", term[128];
		const char *t = cons;
		bool moved = false;

		while (*t) {
			size_t tl = strcspn(t, "&"), nl;
			struct noderes one = { .value = 1 };
			bool feature = false;

			snprintf(term, sizeof(term), "%.*s", (int)(tl < sizeof(term) ? tl : sizeof(term) - 1), t);
			nl = strcspn(term, "=");
			for (const struct node *nd = pool_nodes(pool); nd && !feature; nd = nd->next)
				feature = nd->features && nodesel_features_has(nd->features, term, nl);
			if (!feature && nl < NODERES_NAME_MAX && pool_has_noderes(pool, term, nl, &most)) {
				char item[160];
				size_t k;

				snprintf(item, sizeof(item), "%.*s:%s", (int)nl, term, term[nl] ? term + nl + 1 : "1");
				if (noderes_parse(item, &one, 1, &k, &err) < 0) {
					snprintf(buf, len, "%.60s: %s", term, err.text);
					return -EINVAL;
				}
				for (k = 0; k < n && strcmp(r[k].name, one.name); k++)
					;
				if (k == n && n == NODERES_MAX) {
					snprintf(buf, len, "more than %d node resources", NODERES_MAX);
					return -EINVAL;
				}
				if (k == n)
					r[n++] = one;
				else if (one.value > r[k].value)
					r[k].value = one.value;
				moved = true;
			} else {
				size_t at = strlen(kept);

				snprintf(kept + at, sizeof(kept) - at, "%s%s", at ? "&" : "", term);
			}
			t += tl + (t[tl] == '&');
		}
		if (moved && kept[0])
			json_object_set_new(msg, "constraint", json_string(kept));
		else if (moved)
			json_object_del(msg, "constraint");
	}
	for (size_t i = 0; i < n; i++) {
		if (!pool_has_noderes(pool, r[i].name, strlen(r[i].name), &most)) {
			snprintf(buf, len, "node resource %s: no node of this pool has it", r[i].name);
			return -EINVAL;
		}
		if (r[i].value > most) {
			snprintf(buf, len, "node resource %s:%llu: more than any node of this pool has (%llu)", r[i].name,
				 (unsigned long long)r[i].value, (unsigned long long)most);
			return -EINVAL;
		}
	}
	if (n && json_array_size(json_object_get(msg, "chunks"))) {
		const char *place = wire_str(msg, "place");

		if (place && !strncmp(place, "pack", 4)) {
			snprintf(buf, len, "place=pack with node resources: qpool puts each chunk that asks for them "
				 "on a node of its own (place=scatter)");
			return -EINVAL;
		}
		json_object_set_new(msg, "place", json_string(place && strstr(place, ":excl") ? "scatter:excl"
										: "scatter"));
	}
	if (n && noderes_format(r, n, canon, clen) < 0) {
		snprintf(buf, len, "the node resources' text is too long");
		return -EINVAL;
	}
	return 0;
}

