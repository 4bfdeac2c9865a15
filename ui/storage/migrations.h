// The chat database's schema history. Version N's steps turn a version N-1 database into
// version N; never edit a released step, add a new version instead.
#pragma once
#include <QStringList>

QStringList migrationSteps(int version);
