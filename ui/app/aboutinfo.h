// The About dialog's figures: this build (version, git commit, build type, CUDA architectures)
// and what the machine offers at run time (NVIDIA driver, CUDA, cuBLAS, GPUs), from the engine's
// exl::build_info() and exl::cuda_runtime_info(). Probed once, when first created.
#pragma once
#include <QObject>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

class AboutInfo : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(QString gitCommit READ gitCommit CONSTANT)
    Q_PROPERTY(QString buildType READ buildType CONSTANT)
    Q_PROPERTY(QString cudaArchitectures READ cudaArchitectures CONSTANT)
    Q_PROPERTY(QString cudaToolkit READ cudaToolkit CONSTANT)
    Q_PROPERTY(bool cudaBuilt READ cudaBuilt CONSTANT)
    Q_PROPERTY(bool cudaUsable READ cudaUsable CONSTANT)
    Q_PROPERTY(QString cudaStatus READ cudaStatus CONSTANT)
    Q_PROPERTY(QString driverVersion READ driverVersion CONSTANT)
    Q_PROPERTY(QString driverCuda READ driverCuda CONSTANT)
    Q_PROPERTY(QString cublasVersion READ cublasVersion CONSTANT)
    Q_PROPERTY(QString cublasPath READ cublasPath CONSTANT)
    Q_PROPERTY(QStringList devices READ devices CONSTANT)
    Q_PROPERTY(QString qtVersion READ qtVersion CONSTANT)
    Q_PROPERTY(QString report READ report CONSTANT)
public:
    explicit AboutInfo(QObject *parent = nullptr);

    QString version() const { return m_version; }
    QString gitCommit() const { return m_gitCommit; }
    QString buildType() const { return m_buildType; }
    QString cudaArchitectures() const { return m_cudaArchitectures; }
    QString cudaToolkit() const { return m_cudaToolkit; }
    bool cudaBuilt() const { return m_cudaBuilt; }
    bool cudaUsable() const { return m_cudaUsable; }
    QString cudaStatus() const { return m_cudaStatus; }
    QString driverVersion() const { return m_driverVersion; }
    QString driverCuda() const { return m_driverCuda; }
    QString cublasVersion() const { return m_cublasVersion; }
    QString cublasPath() const { return m_cublasPath; }
    QStringList devices() const { return m_devices; }
    QString qtVersion() const;
    // The same text as `exl-studio --version` (for bug reports: the dialog copies it).
    QString report() const { return m_report; }

    Q_INVOKABLE void copyReport() const;

private:
    QString m_version, m_gitCommit, m_buildType, m_cudaArchitectures, m_cudaToolkit;
    bool m_cudaBuilt = false, m_cudaUsable = false;
    QString m_cudaStatus, m_driverVersion, m_driverCuda, m_cublasVersion, m_cublasPath;
    QStringList m_devices;
    QString m_report;
};
