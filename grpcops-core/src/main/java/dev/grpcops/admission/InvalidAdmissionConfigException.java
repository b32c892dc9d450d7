package dev.grpcops.admission;

import dev.grpcops.InvalidSettingException;

/** Admission configuration that cannot work; {@link #field()} names the setting, relative to the admission prefix. */
public final class InvalidAdmissionConfigException extends InvalidSettingException {

    private static final long serialVersionUID = 1L;

    public InvalidAdmissionConfigException(String field, String message) {
        super(field, message);
    }
}
