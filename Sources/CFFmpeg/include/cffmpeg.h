// FFmpeg's libavformat, libavcodec and libavutil (Debian libavformat-dev,
// libavcodec-dev, libavutil-dev; FFmpeg 5.1 on bookworm, 7.1 on trixie:
// only the AVChannelLayout API both have is used), loaded on first use.
//
// Why a loader: linked, FFmpeg maps some 90 libraries into every process
// (x265, rav1e, aom, librsvg, gnutls…), and the box locks all it maps in
// memory for its real-time thread (mlockall): 15 MB the box and every mix
// paid though only .m4a files use FFmpeg. Here the three libraries are
// opened (dlopen) the first time an .m4a is read or written, and each
// function the project calls is a pointer filled then, of FFmpeg's own
// type (`__typeof__`, from the headers the program was built against,
// so their sonames match). The headers give the types, enums and macros.
#pragma once
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <stddef.h>

// AVERROR(…) and AVERROR_EOF are macros Swift cannot import: given here as functions.
static inline int acapella_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int acapella_averror_eof(void) { return AVERROR_EOF; }

// Every FFmpeg function the project calls.
#define ACAPELLA_FFMPEG_FUNCTIONS(X) \
    X(av_channel_layout_copy) X(av_channel_layout_default) X(av_dict_free) X(av_dict_set) X(av_find_best_stream) \
    X(av_frame_alloc) X(av_frame_free) X(av_frame_get_buffer) X(av_frame_make_writable) X(av_frame_unref) \
    X(av_get_packed_sample_fmt) X(av_get_sample_fmt_name) X(av_interleaved_write_frame) X(av_log_set_level) \
    X(av_packet_alloc) X(av_packet_free) X(av_packet_rescale_ts) X(av_packet_unref) X(av_read_frame) X(av_rescale_q) \
    X(av_sample_fmt_is_planar) X(av_strerror) X(av_write_trailer) X(avcodec_alloc_context3) X(avcodec_find_encoder) \
    X(avcodec_free_context) X(avcodec_open2) X(avcodec_parameters_from_context) \
    X(avcodec_parameters_to_context) X(avcodec_receive_frame) X(avcodec_receive_packet) X(avcodec_send_frame) \
    X(avcodec_send_packet) X(avformat_alloc_output_context2) X(avformat_close_input) X(avformat_find_stream_info) \
    X(avformat_free_context) X(avformat_new_stream) X(avformat_open_input) X(avformat_write_header) X(avio_closep) \
    X(avio_open)

// FFmpeg's functions by their names, of FFmpeg's own types, once
// `acapella_ffmpeg_load` has returned 1 (null until then: never before).
#define ACAPELLA_FFMPEG_FIELD(name) __typeof__(&name) _Nonnull name;
struct acapella_ffmpeg {
    ACAPELLA_FFMPEG_FUNCTIONS(ACAPELLA_FFMPEG_FIELD)
};
#undef ACAPELLA_FFMPEG_FIELD
const struct acapella_ffmpeg *_Nonnull acapella_ffmpeg(void);

// Opens FFmpeg (once; thread-safe) and fills every function: 1 when
// done, else 0 with why in `why` (the library or function not found).
int acapella_ffmpeg_load(char *_Nullable why, size_t size);
