// The remote endpoints of the Models page: add (name, address, optional API key), remove,
// and what the user should know (plain HTTP, where the key is kept, listing errors). Changes
// are saved and handed to the RemoteInferenceService, which lists the endpoints' models.
#pragma once
#include <QAbstractListModel>
#include <QPointer>
#include <QtQml/qqmlregistration.h>

#include "services/remoteendpoint.h"

class RemoteInferenceService;

class RemoteEndpointsModel : public QAbstractListModel
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(QString keyWarning READ keyWarning CONSTANT)
    Q_PROPERTY(QString listError READ listError NOTIFY listErrorChanged)
public:
    enum Roles { NameRole = Qt::UserRole + 1, UrlRole, NoteRole, HasKeyRole };

    RemoteEndpointsModel(RemoteInferenceService *service, QString storePath, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Adds an endpoint; returns an empty string, or why it was refused.
    Q_INVOKABLE QString add(const QString &name, const QString &url, const QString &apiKey);
    Q_INVOKABLE void remove(int row);
    // The interface language changed: the notes are read again.
    void retranslate() { if (!m_endpoints.isEmpty()) Q_EMIT dataChanged(index(0), index(int(m_endpoints.size()) - 1)); }
    // Changes an endpoint's name, address and key (an empty `apiKey` keeps the stored key unless
    // `clearKey`); returns an empty string, or why it was refused (the endpoint is then unchanged).
    Q_INVOKABLE QString update(int row, const QString &name, const QString &url, const QString &apiKey, bool clearKey);
    // What an address the user is typing would get (e.g. the plain-HTTP note, or the refusal).
    Q_INVOKABLE QString check(const QString &url) const;
    QString keyWarning() const { return m_store.keyWarning(); }
    QString listError() const;

Q_SIGNALS:
    void listErrorChanged();

private:
    bool saveAndApply();
    // Why an endpoint named `name` at `address` cannot be stored as row `row` (-1: a new one).
    QString refusal(int row, const QString &name, const EndpointAddress &address) const;

    QPointer<RemoteInferenceService> m_service;
    RemoteEndpointStore m_store;
    QList<RemoteEndpoint> m_endpoints;
};
