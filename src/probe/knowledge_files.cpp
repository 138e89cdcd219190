#include "probe/knowledge_files.hpp"

#include "probe/data_dir.hpp"

#include <fstream>
#include <sstream>

namespace torchfix {

Expected<Knowledge> load_knowledge(const std::filesystem::path& data_dir) {
  std::vector<KnowledgeText> texts;
  for (const char* name : {"gpus.toml", "toolkits.toml", "torch-wheels.toml"}) {
    const auto path = data_dir / "recipes" / name;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return fail("cannot read knowledge table " + path.string() +
                  ": missing or unreadable; reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/");
    }
    std::ostringstream text;
    text << in.rdbuf();
    texts.push_back({path.string(), text.str()});
  }
  return parse_knowledge(texts);
}

Expected<Knowledge> load_installed_knowledge(const Environment& env) {
  TF_TRY(data_dir, find_data_dir(env));
  return load_knowledge(data_dir);
}

}  // namespace torchfix
