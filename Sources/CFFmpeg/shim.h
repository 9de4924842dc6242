// Umbrella header for FFmpeg's libavformat, libavcodec and libavutil (Debian
// libavformat-dev, libavcodec-dev, libavutil-dev; FFmpeg 5.1 on bookworm,
// 7.1 on trixie: only the AVChannelLayout API both have is used).
// AVERROR(…) and AVERROR_EOF are macros Swift cannot import: given here as
// functions.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <errno.h>

static inline int acapella_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int acapella_averror_eof(void) { return AVERROR_EOF; }
