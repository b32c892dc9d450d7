package com.example.greeter;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A plain Spring Boot 4 service on Spring gRPC; grpcops comes with the starter on the classpath. */
@SpringBootApplication
public class GreeterApplication {

    public static void main(String[] args) {
        SpringApplication.run(GreeterApplication.class, args);
    }
}
