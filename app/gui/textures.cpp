#include "textures.hpp"

#include <GL/gl.h>
#include <stb_image.h>

#ifndef GL_CLAMP_TO_EDGE
#define GL_CLAMP_TO_EDGE 0x812F
#endif

namespace wb::gui {

MdImage TextureCache::get(const std::filesystem::path& path) {
  auto key = path.string();
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    Entry e;
    e.pending = std::async(std::launch::async, [key] {
      Decoded d;
      int n = 0;
      d.rgba = stbi_load(key.c_str(), &d.w, &d.h, &n, 4);
      return d;
    });
    it = entries_.emplace(key, std::move(e)).first;
  }
  Entry& e = it->second;
  if (!e.ready && e.pending.valid() &&
      e.pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    Decoded d = e.pending.get();
    e.ready = true;
    if (!d.rgba) {
      e.image.failed = true;
    } else {
      e.image.width = d.w;
      e.image.height = d.h;
      if (gl) {
        GLuint tex = 0;
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, d.w, d.h, 0, GL_RGBA, GL_UNSIGNED_BYTE, d.rgba);
        e.image.texture = reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex));
      }
      stbi_image_free(d.rgba);
    }
  }
  return e.ready ? e.image : MdImage{};
}

void TextureCache::clear() {
  for (auto& [k, e] : entries_) {
    if (e.pending.valid()) {
      Decoded d = e.pending.get();
      if (d.rgba) stbi_image_free(d.rgba);
    }
    if (gl && e.image.texture) {
      GLuint tex = GLuint(reinterpret_cast<intptr_t>(e.image.texture));
      glDeleteTextures(1, &tex);
    }
  }
  entries_.clear();
}

TextureCache::~TextureCache() {
  // Textures die with the GL context; only the decodes still running need waiting for.
  for (auto& [k, e] : entries_)
    if (e.pending.valid()) {
      Decoded d = e.pending.get();
      if (d.rgba) stbi_image_free(d.rgba);
    }
}

} // namespace wb::gui
