// Umbrella header for the CCairo system library module: cairo's PDF
// surface and its FreeType font face (the music font is loaded from its
// file, never looked up by name).
#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-ft.h>
#include <ft2build.h>
#include FT_FREETYPE_H
