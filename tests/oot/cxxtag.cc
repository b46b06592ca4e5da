// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An out-of-tree sluice filter written in C++ (C++17): puts a tag before
 * or after each record's text line.  It shows that <sluice/plugin.h>
 * compiles as C++ (the option and field macros, SL_*_END, SLUICE_PLUGIN
 * with C linkage) and how to write the descriptor there: designators in
 * member order (C++20, or g++ >= 8 / clang >= 10 in C++17 mode), built
 * with -Wno-missing-field-initializers since g++ warns about every member
 * left out (and later minors append members).  No exception may leave a
 * callback: the core is C.
 */
#include <cstdlib>
#include <cstring>
#include <new>

#include <sluice/plugin.h>

namespace {

struct tag_config {
	const char *tag;
	int where;		/* index into where_names */
	bool upper;
	int64_t repeat;
	struct sl_strlist skip;	/* texts left alone */
};

const char *const where_names[] = {"before", "after", nullptr};

const struct sl_option tag_options[] = {
	SL_OPT_STR("tag", struct tag_config, tag, SL_REQUIRED, "the tag"),
	SL_OPT_ENUM("where", struct tag_config, where, "before", where_names,
		    "put the tag before or after the text"),
	SL_OPT_BOOL("upper", struct tag_config, upper, "false", "upper-case the tag"),
	SL_OPT_INT("repeat", struct tag_config, repeat, "1", 1, 4, "how many times"),
	SL_OPT_LIST("skip", struct tag_config, skip, "[]", "texts left as they are"),
	SL_OPT_END,
};

const struct sl_field_decl tag_fields[] = {SL_FIELD_DECL(SL_F_TEXT), SL_FIELD_END};

class tagger {
public:
	explicit tagger(const tag_config *cfg) noexcept : cfg_(cfg), len_(0)
	{
		for (int64_t r = 0; r < cfg->repeat; r++)
			for (const char *c = cfg->tag; *c && len_ < sizeof(tag_) - 1; c++)
				tag_[len_++] = cfg->upper && *c >= 'a' && *c <= 'z'
						       ? static_cast<char>(*c - 'a' + 'A') : *c;
	}

	int process(struct sl_batch *b) const noexcept
	{
		for (unsigned i = 0; i < b->count; i++) {
			struct sl_record *rec = b->rec[i];

			if (!sl_has(rec, SL_F_TEXT) || skipped(rec->v[SL_F_TEXT].bytes))
				continue;
			struct sl_bytes text = rec->v[SL_F_TEXT].bytes;
			auto *out = static_cast<uint8_t *>(sl_batch_alloc(b, text.len + len_));
			if (!out)
				return -1;
			bool before = cfg_->where == 0;
			std::memcpy(out + (before ? 0 : text.len), tag_, len_);
			std::memcpy(out + (before ? len_ : 0), text.ptr, text.len);
			sl_set_bytes(rec, SL_F_TEXT, out, static_cast<uint32_t>(text.len + len_));
		}
		return 0;
	}

private:
	bool skipped(const struct sl_bytes &t) const noexcept
	{
		for (unsigned k = 0; k < cfg_->skip.n; k++)
			if (std::strlen(cfg_->skip.v[k]) == t.len &&
			    std::memcmp(cfg_->skip.v[k], t.ptr, t.len) == 0)
				return true;
		return false;
	}

	const tag_config *cfg_;
	char tag_[256];
	size_t len_;
};

int tag_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
		  void **state) noexcept
{
	auto *cfg = static_cast<const tag_config *>(config);

	if (!*cfg->tag) {
		host->config_error(inst, "tag", "the tag must not be empty");
		return -1;
	}
	auto *t = new (std::nothrow) tagger(cfg);
	if (!t)
		return -1;
	*state = t;
	return 0;
}

int tag_process(void *state, struct sl_batch *b) noexcept
{
	return static_cast<const tagger *>(state)->process(b);
}

void tag_destroy(void *state) noexcept
{
	delete static_cast<tagger *>(state);
}

const struct sl_plugin tag_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "cxxtag",
	.description = "example out-of-tree filter in C++: tags the text line",
	.config_size = sizeof(tag_config),
	.options = tag_options,
	.needs = tag_fields,
	.provides = tag_fields,
	.configure = tag_configure,
	.process = tag_process,
	.destroy = tag_destroy,
};

} // namespace

SLUICE_PLUGIN(tag_plugin)
