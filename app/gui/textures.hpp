// Pictures for lessons: PNGs under the catalog decoded on a worker thread (stb_image) and made
// into OpenGL textures on the UI thread when ready, so opening a lesson never stalls a frame.
#pragma once
#include "markdown.hpp"

#include <filesystem>
#include <future>
#include <map>
#include <string>

namespace wb::gui {

class TextureCache {
public:
  // The texture for `path`, or {failed=false, texture=nullptr} while it is still loading.
  MdImage get(const std::filesystem::path& path);
  void clear(); // frees every texture (needs the GL context current)
  ~TextureCache();
  // Without a GL context (headless tests): decode only, never make textures.
  bool gl = true;

private:
  struct Decoded {
    int w = 0, h = 0;
    unsigned char* rgba = nullptr; // stbi_image_free'd after upload
  };
  struct Entry {
    std::future<Decoded> pending;
    MdImage image;
    bool ready = false;
  };
  std::map<std::string, Entry> entries_;
};

} // namespace wb::gui
