#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static volatile int go, stop;
static double rate[2];
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
struct arg{int core;};
static void *work(void *p){int c=((struct arg*)p)->core;pin(c);while(!go);uint64_t x=1,n=0;static __thread uint64_t buf[65536];double t0=now();
 while(!stop){for(int i=0;i<1000;i++){uint64_t j=(x>>7)&65535;buf[j]+=x;x=x*6364136223846793005ULL+buf[(j*7)&65535];}n++;}
 rate[c]=n/(now()-t0);if(x==42)printf("!");return 0;}
static void run(int both,double secs){pthread_t t[2];struct arg a[2]={{0},{1}};go=0;stop=0;
 pthread_create(&t[0],0,work,&a[0]);if(both)pthread_create(&t[1],0,work,&a[1]);
 struct timespec ts={0,20000000};nanosleep(&ts,0);go=1;ts.tv_sec=(time_t)secs;ts.tv_nsec=(long)((secs-(time_t)secs)*1e9);nanosleep(&ts,0);stop=1;
 pthread_join(t[0],0);if(both)pthread_join(t[1],0);}
int main(int c,char**v){int n=c>1?atoi(v[1]):10;for(int i=0;i<n;i++){run(0,0.3);double a=rate[0];run(1,0.3);printf("alone %.0f both %.0f %.0f ratio %.3f\n",a,rate[0],rate[1],rate[0]/a);fflush(stdout);}}
