#pragma once
// What the doctor says inside an application container image (vLLM's
// vllm/vllm-openai, SGLang's lmsysorg/sglang: recipes/app-images.toml, the
// projects and their markers as data), where the unit to change is the
// image's tag, not a pip install or a source build in a running container.
// Pure: findings from the Situation (derived once by the caller) and the tables.

#include "core/diagnosis/diagnosis.hpp"
#include "core/facts/app_image_table.hpp"
#include "core/situation/situation.hpp"

namespace torchfix {

/// Adds what the doctor says on a machine inside the image of a project of
/// recipes/app-images.toml [[project]] (known by its marker: the variable the
/// image sets, or the project installed editable from the image's checkout):
/// a note naming the image and what its kernels are built for, a problem
/// when they or its CUDA cannot run on a GPU here with the host's driver,
/// with the tags that do (the first release at or after the installed one,
/// and the newest) or the driver its tag needs as the fix; pip installs and
/// source builds other findings offer are marked as lost when the container
/// is recreated. Does nothing outside such an image.
void add_inside_app_image_notes(Diagnosis& diagnosis, const Situation& situation, const Knowledge& knowledge);

/// Says whether `snapshot` carries the mark of a project of
/// recipes/app-images.toml [[project]] (it runs inside that project's image).
bool inside_app_image(const Snapshot& snapshot, const Knowledge& knowledge);

/// Takes the commands out of `fix` of `finding`, where running them would
/// change a running container: each goes to the finding's details as
/// "NOT_RUN: COMMAND", `why` ends the fix's summary, and its steps go, so
/// that neither "Run first" nor `torchfix fix` runs them.
void keep_fix_as_words(Finding& finding, Fix& fix, const std::string& not_run, const std::string& why);

}  // namespace torchfix
