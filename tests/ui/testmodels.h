// Model folders made for tests: a copy of a fixture model with another vocabulary.
#pragma once
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

// A copy of `model` (links to its files) whose tokenizer.json has the pieces of tokens 300 and 301
// swapped: same size, another vocabulary (what a draft model must not have). Creates `into`.
inline bool writeOtherVocabulary(const QString &model, const QString &into)
{
    QDir src(model);
    if (!QDir().mkpath(into))
        return false;
    for (const QString &name : src.entryList(QDir::Files)) {
        if (name == QLatin1String("tokenizer.json"))
            continue;
        if (!QFile::link(src.filePath(name), QDir(into).filePath(name)))
            return false;
    }
    QFile in(src.filePath(QStringLiteral("tokenizer.json")));
    if (!in.open(QIODevice::ReadOnly))
        return false;
    QJsonObject root = QJsonDocument::fromJson(in.readAll()).object();
    QJsonObject bpe = root.value(QStringLiteral("model")).toObject();
    QJsonObject vocab = bpe.value(QStringLiteral("vocab")).toObject();
    QString a, b;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        if (it.value().toInt() == 300)
            a = it.key();
        if (it.value().toInt() == 301)
            b = it.key();
    }
    if (a.isEmpty() || b.isEmpty())
        return false;
    vocab.insert(a, 301);
    vocab.insert(b, 300);
    bpe.insert(QStringLiteral("vocab"), vocab);
    root.insert(QStringLiteral("model"), bpe);
    QFile out(QDir(into).filePath(QStringLiteral("tokenizer.json")));
    return out.open(QIODevice::WriteOnly) && out.write(QJsonDocument(root).toJson()) > 0;
}
