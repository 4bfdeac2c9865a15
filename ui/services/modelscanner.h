// Finds model folders on disk and describes them for the model list (name, architecture,
// parameters, bpw, head bits, size, native context) through the engine's own readers.
#pragma once
#include <QStringList>
#include <optional>

#include "inferencetypes.h"

namespace exl {
class Model;
class Tokenizer;
}

// A folder with a config.json is a model folder. Folders whose files cannot be read are still
// listed (architecture "?"), so loading them shows the engine's error.
std::optional<ModelInfo> describeModelFolder(const QString &dir);
ModelInfo describeModel(const exl::Model &model, const QString &dir);

// SHA-256 over the vocabulary size and the piece of every id: equal digests mean the vocabularies
// exl::check_draft_vocabulary accepts as model and draft (same size, every token the same).
QByteArray vocabularyDigest(const exl::Tokenizer &tokenizer);

// Each root that is a model folder itself, and each model folder directly inside a root; sorted
// by name within a root, duplicates (same absolute path) dropped.
QList<ModelInfo> scanModelFolders(const QStringList &roots);

// The fixture models of a source checkout, so a fresh clone has something to chat with:
// $EXL_FIXTURES (or <source>/../shared/fixtures)/models/exl2 and /hf, those that exist.
QStringList fixtureModelRoots();
