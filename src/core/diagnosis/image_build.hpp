#pragma once
// What the doctor says in a container whose Python packages are in the
// image (a project's own Dockerfile: jim60105/docker-stable-diffusion-webui),
// not on a mounted volume: an install into the running container is lost
// when it is recreated, so the change belongs in the image's build. NGC's
// and the application images of recipes/app-images.toml have their own
// fix, a tag (ngc_findings, app_images). Pure: findings from the Situation.

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix {

/// Rewrites the fixes of each environment whose torch is in the container's
/// image (EnvFacts::home): puts first the change to the image's build (the
/// RUN lines of the verified install fix, for its Dockerfile), naming the
/// installed packages whose exact torch pin put the failing torch there
/// (xformers==0.0.29.post2 requires torch==2.6.0) and the release each moves
/// to; labels the pip installs as a test in the running container; keeps
/// source builds as words only (never built in a running container). Does
/// nothing outside a container, for a volume, or inside an NGC or
/// application image.
void add_image_build_fixes(Diagnosis& diagnosis, const Situation& situation, const Knowledge& knowledge);

}  // namespace torchfix
